"""`gateway eval prefix`: how much of each forwarded prompt a provider's prompt cache
can reuse, by where the memory block is placed (policy `memory.placement`).

Each LoCoMo session is replayed as one chat: at every turn of the first speaker, a
request holding a system prompt, the session so far (first speaker as `user`, second
as `assistant`) and a memory block of earlier sessions' turns that share the most words
with the current turn (up to 512 tokens, built by the gateway's `build_block`; it
changes from turn to turn, as retrieved memory does). The prompt is tokenised as
role + content per message with the gateway's tiktoken counter; the stable prefix of a
request is its common token prefix with the previous request of the same session.
Reported: stable prefix tokens / prompt tokens, summed over every request after a
session's first, per placement.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tiktoken

from gateway.memory.inject import Placement, build_block, place_blocks
from gateway.memory.session import MemoryCandidate, Origin
from gateway.memory.tokens import TokenCounter, Tokenizers

# memory_recall's loader of one conversation's sessions (number, start time, turns).
from gateway_tools.evaluation.memory_recall import (
    LOCOMO_FILE,
    TARGET_MODEL,
    _sessions,
    parse_selection,
    turn_content,
)

PLACEMENTS: tuple[Placement, ...] = ("after_system", "before_last_user")
# The same requests without a memory block: the most any placement can keep stable.
NO_BLOCK = "no_block"
SYSTEM_PROMPT = (
    "You are a friendly assistant who remembers the user's life. Answer in one or two sentences."
)
BLOCK_TOKENS = 512
TOP_MEMORIES = 5
_WORD = re.compile(r"[a-z0-9']{3,}")


@dataclass(slots=True)
class Tally:
    requests: int = 0
    prompt_tokens: int = 0
    stable_tokens: int = 0

    def share(self) -> float:
        return self.stable_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _memories(
    earlier: Sequence[tuple[str, float]], query: str, counter: TokenCounter
) -> dict[str, Any] | None:
    """The block for `query`: the earlier turns sharing the most words with it."""
    wanted = _words(query)
    scored = sorted(
        ((len(wanted & _words(text)), index) for index, (text, _) in enumerate(earlier)),
        reverse=True,
    )[:TOP_MEMORIES]
    candidates = [
        MemoryCandidate(
            key=str(index),
            content=earlier[index][0],
            score=float(overlap),
            origin=Origin.THIS_TURN,
            memory_id=str(index),
            created_at=earlier[index][1],
        )
        for overlap, index in scored
        if overlap > 0
    ]
    return build_block(candidates, counter, BLOCK_TOKENS).message


def _tokens(encoding: tiktoken.Encoding, messages: Sequence[dict[str, Any]]) -> list[int]:
    text = "".join(f"<|{m['role']}|>{m['content']}<|end|>" for m in messages)
    return encoding.encode_ordinary(text)


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    limit = min(len(a), len(b))
    for index in range(limit):
        if a[index] != b[index]:
            return index
    return limit


def _requests(conversation: dict[str, Any], counter: TokenCounter) -> Iterator[list[Any]]:
    """Per session: the (messages, block) of each first-speaker turn."""
    earlier: list[tuple[str, float]] = []
    for _, started, turns in _sessions(conversation["conversation"]):
        first = turns[0]["speaker"]
        history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
        session: list[Any] = []
        for turn in turns:
            content = turn_content(turn)
            role = "user" if turn["speaker"] == first else "assistant"
            history.append({"role": role, "content": content})
            if role == "user":
                session.append((list(history), _memories(earlier, content, counter)))
        earlier.extend((turn_content(turn), started) for turn in turns)
        yield session


def measure(path: Path, selection: Sequence[int] | None) -> dict[str, Any]:
    started = time.perf_counter()
    raw = json.loads(path.read_text(encoding="utf-8"))
    chosen = list(range(len(raw))) if selection is None else list(selection)
    counter = Tokenizers().for_model(TARGET_MODEL)
    encoding = tiktoken.get_encoding(counter.encoding_name)
    tallies = {placement: Tally() for placement in (*PLACEMENTS, NO_BLOCK)}
    for index in chosen:
        for session in _requests(raw[index], counter):
            for placement in (*PLACEMENTS, NO_BLOCK):
                previous: list[int] | None = None
                tally = tallies[placement]
                for messages, block in session:
                    if placement == NO_BLOCK or block is None:
                        placed = list(messages)
                    else:
                        placed = place_blocks(messages, [block], placement)  # type: ignore[arg-type]
                    tokens = _tokens(encoding, placed)
                    if previous is not None:
                        tally.requests += 1
                        tally.prompt_tokens += len(tokens)
                        tally.stable_tokens += _common_prefix(previous, tokens)
                    previous = tokens
    return {
        "data": str(path),
        "conversations": chosen,
        "token_encoding": counter.encoding_name,
        "placements": {
            placement: {
                "requests": tally.requests,
                "prompt_tokens": tally.prompt_tokens,
                "stable_prefix_tokens": tally.stable_tokens,
                "stable_prefix_share": round(tally.share(), 4),
            }
            for placement, tally in tallies.items()
        },
        "seconds": round(time.perf_counter() - started, 2),
    }


def run_prefix_eval(
    data_dir: Path | None, *, conversations: str | None = None, output: str | None = None
) -> int:
    path = data_dir / LOCOMO_FILE if data_dir is not None else None
    if path is None or not path.is_file():
        print(f"gateway eval prefix: --data must name the shared data folder (with {LOCOMO_FILE})")
        return 2
    try:
        selection = parse_selection(conversations) if conversations else None
    except ValueError as exc:
        print(f"gateway eval prefix: {exc}")
        return 2
    results = measure(path, selection)
    print(f"conversations {results['conversations']}, tokens {results['token_encoding']}")
    for placement, row in results["placements"].items():
        print(
            f"  {placement:<17} {row['requests']:>5} requests  stable prefix "
            f"{row['stable_prefix_tokens']:>9} / {row['prompt_tokens']:>9} prompt tokens "
            f"= {row['stable_prefix_share']:.1%}"
        )
    print(f"wall time {results['seconds']:.1f} s")
    if output:
        Path(output).write_text(json.dumps(results, indent=2))
    return 0
