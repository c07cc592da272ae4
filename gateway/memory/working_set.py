"""The working-memory budget (policy `working_memory`, off by default): fit what is
forwarded into the model's context window, section by section.

Sections, each with a share of the context window (`working_memory.shares`):
- static prefix: the leading system/developer messages and the tool schemas; never
  changed (byte-stable for provider prompt caching). Where it is longer than its
  share, the excess comes out of the recent turns.
- recent turns: the conversation after the prefix. The last user turn (and what
  follows it: an agent's tool calls and results) is always kept; earlier turns are
  dropped oldest first, an assistant message with tool calls together with their tool
  results (a provider refuses a tool result without its call).
- tool results: their total; the newest keep the most, longer ones are cut with
  `[... truncated N tokens ...]` (or summarised, see `tool_results.py`).
- task state and retrieved memory: the caps of the two injected blocks.
- output reserve: kept free for the answer (the request's max_tokens when it sets one).
Last, the blocks shrink and more earlier turns go until prompt + reserve fit the
window; only a prefix plus last turn that alone exceed it are forwarded over it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.memory.tokens import TokenCounter
from gateway.policy.working_memory import WorkingMemorySharesPolicy

Message = dict[str, Any]
# (text, max tokens) -> text of at most that many tokens
Shrink = Callable[[str, int], Awaitable[str]]
# A tool result is never cut below this (the marker alone takes ~10).
MIN_TOOL_RESULT_TOKENS = 32
_TOOL_ROLES = ("tool", "function")


@dataclass(frozen=True, slots=True)
class SectionBudgets:
    window_tokens: int
    output_reserve_tokens: int
    static_prefix_tokens: int
    recent_turns_tokens: int
    task_state_tokens: int
    tool_results_tokens: int
    retrieved_memory_tokens: int


def section_budgets(
    window_tokens: int, shares: WorkingMemorySharesPolicy, requested_output_tokens: int | None
) -> SectionBudgets:
    def share(value: float) -> int:
        return int(window_tokens * value)

    reserve = (
        min(requested_output_tokens, window_tokens)
        if requested_output_tokens is not None
        else share(shares.output_reserve)
    )
    return SectionBudgets(
        window_tokens=window_tokens,
        output_reserve_tokens=reserve,
        static_prefix_tokens=share(shares.static_prefix),
        recent_turns_tokens=share(shares.recent_turns),
        task_state_tokens=share(shares.task_state),
        tool_results_tokens=share(shares.tool_results),
        retrieved_memory_tokens=share(shares.retrieved_memory),
    )


@dataclass(frozen=True, slots=True)
class Conversation:
    prefix: list[Message]  # leading system/developer messages
    earlier: list[Message]  # before the last user turn
    current: list[Message]  # the last user message and everything after it


def split_conversation(messages: Sequence[Message]) -> Conversation:
    start = 0
    while start < len(messages) and messages[start].get("role") in ("system", "developer"):
        start += 1
    last_user = next(
        (i for i in range(len(messages) - 1, start - 1, -1) if messages[i].get("role") == "user"),
        start,
    )
    return Conversation(
        list(messages[:start]), list(messages[start:last_user]), list(messages[last_user:])
    )


def turn_units(messages: Sequence[Message]) -> list[list[Message]]:
    """Messages grouped so that a tool result stays with the call before it."""
    units: list[list[Message]] = []
    for message in messages:
        if message.get("role") in _TOOL_ROLES and units:
            units[-1].append(message)
        else:
            units.append([message])
    return units


def messages_tokens(counter: TokenCounter, messages: list[Message]) -> int:
    """What `messages` add to a prompt (without the reply priming, counted once)."""
    return counter.count_messages(messages) - counter.count_messages([])


def tools_tokens(counter: TokenCounter, body: dict[str, Any]) -> int:
    tools = body.get("tools") or body.get("functions")
    return counter.count(orjson.dumps(tools).decode()) if tools else 0


def window_earlier(
    counter: TokenCounter, earlier: list[Message], budget_tokens: int
) -> tuple[list[Message], int]:
    """The newest whole units of `earlier` within `budget_tokens`, and how many messages
    were dropped (the oldest: once one unit does not fit, every older one goes too)."""
    kept: list[list[Message]] = []
    used = 0
    for unit in reversed(turn_units(earlier)):
        cost = messages_tokens(counter, unit)
        if used + cost > budget_tokens:
            break
        kept.append(unit)
        used += cost
    flat = [message for unit in reversed(kept) for message in unit]
    return flat, len(earlier) - len(flat)


def drop_oldest_unit(earlier: list[Message]) -> list[Message]:
    units = turn_units(earlier)
    return [message for unit in units[1:] for message in unit]


async def shrink_tool_results(
    counter: TokenCounter, messages: list[Message], budget_tokens: int, shrink: Shrink
) -> tuple[list[Message], int]:
    """Tool results within `budget_tokens` in total, the newest served first; returns
    the messages and how many results were cut."""
    remaining = budget_tokens
    out = list(messages)
    cut = 0
    for index in range(len(out) - 1, -1, -1):
        message = out[index]
        content = message.get("content")
        if message.get("role") not in _TOOL_ROLES or not isinstance(content, str):
            continue
        tokens = counter.count(content)
        if tokens <= remaining:
            remaining -= tokens
            continue
        allowed = max(remaining, MIN_TOOL_RESULT_TOKENS)
        out[index] = {**message, "content": await shrink(content, allowed)}
        remaining = max(0, remaining - allowed)
        cut += 1
    return out, cut
