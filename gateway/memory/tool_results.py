"""Shortening a long tool result for the working-memory budget: cut with a marker that
says how much went, or summarised by a configured model (falling back to the cut when
that model fails or is slow: the request never waits on it longer than the policy's
`summarise_timeout_seconds`)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from gateway.memory.tokens import TokenCounter
from gateway.providers.protocol import ChatProvider
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

_SUMMARY_INSTRUCTION = (
    "Summarise the tool output the user sends in at most {tokens} tokens. Keep every "
    "identifier, number, error message and file name exactly as written; say nothing else."
)


def marker(dropped_tokens: int) -> str:
    return f"[... truncated {dropped_tokens} tokens ...]"


def truncate_with_marker(counter: TokenCounter, text: str, max_tokens: int) -> str:
    """The beginning of `text` and the marker, together at most `max_tokens` (the
    marker alone when even less fits)."""
    total = counter.count(text)
    if total <= max_tokens:
        return text
    room = max_tokens - counter.count("\n" + marker(total))
    while room > 0:
        head = counter.truncate(text, room)
        result = f"{head}\n{marker(total - counter.count(head))}"
        over = counter.count(result) - max_tokens
        if over <= 0:
            return result
        room -= over
    return marker(total)


class ToolResultShrinker:
    """Per request: `shrink(text, max_tokens)` for `shrink_tool_results`."""

    def __init__(
        self,
        counter: TokenCounter,
        provider: ChatProvider | None = None,
        model: str | None = None,
        timeout_seconds: float = 10.0,
        failures: ThrottledLogger | None = None,
    ) -> None:
        self._counter = counter
        self._provider = provider
        self._model = model
        self._timeout = timeout_seconds
        self._failures = failures or ThrottledLogger(logger, interval_seconds=60.0)

    async def shrink(self, text: str, max_tokens: int) -> str:
        if self._provider is not None and self._model is not None:
            summary = await self._summary(text, max_tokens)
            if summary is not None:
                return summary
        return truncate_with_marker(self._counter, text, max_tokens)

    async def _summary(self, text: str, max_tokens: int) -> str | None:
        assert self._provider is not None and self._model is not None
        label = f"[summary of a {self._counter.count(text)}-token tool result] "
        room = max_tokens - self._counter.count(label)
        if room < 8:
            return None
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [
                {"role": "system", "content": _SUMMARY_INSTRUCTION.format(tokens=room)},
                {"role": "user", "content": text},
            ],
            "max_tokens": room,
            "temperature": 0,
        }
        try:
            completion = await asyncio.wait_for(self._provider.complete(body), self._timeout)
            content = completion["choices"][0]["message"]["content"]
        except Exception as exc:  # includes TimeoutError: cut instead
            self._failures.warning(
                "tool-result summary failed (%s); truncating instead", type(exc).__name__
            )
            return None
        if not isinstance(content, str) or not content.strip():
            return None
        return label + self._counter.truncate(content.strip(), room)
