"""Turns the chosen memories into one system message that fits a token budget, and
places it after the app's own system prompt."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from gateway.memory.session import MemoryCandidate

MEMORY_HEADER = (
    "Memory: facts the gateway retrieved from earlier conversations with this user. "
    "Each line says where it came from and when it was recorded. Use what is relevant; "
    "a newer line supersedes an older one about the same thing."
)
# What a chat message costs beyond its text in OpenAI's accounting (role, separators).
MESSAGE_OVERHEAD_TOKENS = 4


class Counter(Protocol):
    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...


@dataclass(frozen=True, slots=True)
class MemoryBlock:
    message: dict[str, Any] | None  # None: nothing fitted
    tokens: int  # of the whole message, overhead included; 0 when nothing injected
    included: list[MemoryCandidate]


def memory_line(candidate: MemoryCandidate) -> str:
    day = datetime.fromtimestamp(candidate.created_at, tz=UTC).date().isoformat()
    return f"- [{candidate.origin.value}, {day}] {' '.join(candidate.content.split())}"


def build_block(
    candidates: Sequence[MemoryCandidate], counter: Counter, budget_tokens: int
) -> MemoryBlock:
    """Best-scored lines first; a line that does not fit is skipped so that a shorter,
    lower one may still fit. The result is counted as a whole, so the budget holds
    exactly (BPE merges across line breaks cannot push it over)."""
    empty = MemoryBlock(None, 0, [])
    header_tokens = counter.count(MEMORY_HEADER) + MESSAGE_OVERHEAD_TOKENS + 1
    room = budget_tokens - header_tokens
    if room <= 0 or not candidates:
        return empty
    ordered = sorted(candidates, key=lambda candidate: -candidate.score)
    lines: list[str] = []
    included: list[MemoryCandidate] = []
    used = 0
    for candidate in ordered:
        line = memory_line(candidate)
        cost = counter.count(line) + 1  # + the line break
        if used + cost > room:
            if not included:
                # The best item alone is too long: keep its beginning rather than
                # inject nothing.
                line = counter.truncate(line, room - 1)
                cost = counter.count(line) + 1
                if not line.strip() or cost > room:
                    continue
            else:
                continue
        lines.append(line)
        included.append(candidate)
        used += cost
    while lines:
        content = MEMORY_HEADER + "\n" + "\n".join(lines)
        tokens = counter.count(content) + MESSAGE_OVERHEAD_TOKENS
        if tokens <= budget_tokens:
            return MemoryBlock({"role": "system", "content": content}, tokens, included)
        lines.pop()
        included.pop()
    return empty


def insert_after_system_prompt(
    messages: Sequence[dict[str, Any]], block: dict[str, Any]
) -> list[dict[str, Any]]:
    """After the leading system/developer messages (the app's own instructions keep
    their place and precedence), before the conversation."""
    index = 0
    while index < len(messages) and messages[index].get("role") in ("system", "developer"):
        index += 1
    return [*messages[:index], block, *messages[index:]]
