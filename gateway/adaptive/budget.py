"""Judge tokens per minute, per tenant: a sliding one-minute window."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

WINDOW_SECONDS = 60.0


class TokenWindow:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._spent: dict[str, deque[tuple[float, int]]] = {}

    def _used(self, key: str) -> int:
        spent = self._spent.setdefault(key, deque())
        oldest = self._clock() - WINDOW_SECONDS
        while spent and spent[0][0] < oldest:
            spent.popleft()
        return sum(tokens for _, tokens in spent)

    def allows(self, key: str, tokens: int, limit_per_minute: int) -> bool:
        """Whether `tokens` more fit this minute (a judgment costing nothing always does)."""
        return tokens <= 0 or self._used(key) + tokens <= limit_per_minute

    def spend(self, key: str, tokens: int) -> None:
        if tokens > 0:
            self._spent.setdefault(key, deque()).append((self._clock(), tokens))
