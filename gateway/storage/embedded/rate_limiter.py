"""Rate limit buckets in this process (the embedded backend runs one process)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from gateway.limits import gcra
from gateway.storage.rate_limiting import RateBucket, RateVerdict

# Full buckets are forgotten once the table holds this many (they hold no state).
_PRUNE_AT_BUCKETS = 10_000


class InProcessRateLimiter:
    """GCRA over a dict of TATs; no I/O, so a check costs a few microseconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._tats: dict[str, float] = {}

    async def acquire(self, buckets: Sequence[RateBucket]) -> RateVerdict:
        now = self._clock()
        if len(self._tats) >= _PRUNE_AT_BUCKETS:
            for key in gcra.expired_keys(self._tats, now):
                del self._tats[key]
        return gcra.acquire(self._tats, buckets, now)

    async def adjust(self, buckets: Sequence[RateBucket]) -> None:
        gcra.adjust(self._tats, buckets, self._clock())
