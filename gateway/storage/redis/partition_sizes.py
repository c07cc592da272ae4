"""How many entries each fingerprint partition of the Redis semantic index holds, as
last counted, so that a search can ask RediSearch to scan a small partition exactly.

Why: a KNN query filtered on one fingerprint is a RediSearch hybrid query. When the
filter keeps a small share of a large graph (10,000 of 1,000,000 entries), RediSearch
picks its BATCHES policy (walk the HNSW graph, drop what the filter rejects, ask for
more) and finds only 0.6-0.75 of the true top 5 (README, "Semantic index at scale");
an exact scan of the partition (`HYBRID_POLICY ADHOC_BF`) finds all of them, and for
tens of thousands of vectors costs a few milliseconds. Which to ask for depends on the
partition's size, which RediSearch does not say with the search.

A partition is counted (one FT.SEARCH with LIMIT 0 0) in the background, one count at
a time: no search waits for a count. Until its first count is in, a partition is searched with
RediSearch's own choice (as before this existed); afterwards with the last count,
recounted behind the searches once it is `refresh_seconds` old. Counting walks the
partition's entries in Redis (37 ms for a million here, 1.4-2.8 ms for 10,000), so a
partition far above the exact-scan limit, which no recount will bring under it soon, is
recounted less often: `refresh_seconds` x (entries / limit), at most an hour. A count
holds Redis's main thread, so Redis stops it after `COUNT_TIMEOUT_MS` (50 ms) and a
partition too large to count by then gets a lower bound (`RedisVectorIndex.
count_partition`): a million entries took 40 ms to count in one run and over the 0.25 s
operation timeout in others, stalling every command behind it. Sizes move
slowly (entries are added one miss at a time and expire over hours), so a count some
seconds old chooses the same policy. A failed count leaves the size unknown for an
interval: RediSearch chooses, never worse than before.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

# The longest a count is kept (a partition far above the exact-scan limit).
MAX_REFRESH_SECONDS = 3_600.0
# Fingerprints remembered (least recently searched dropped first): a fingerprint is a
# tenant, model and policy, so a deployment has few; this bounds a pathological one.
MAX_PARTITIONS_REMEMBERED = 10_000


class PartitionSizes:
    """Last known entry count per fingerprint, refreshed behind the searches."""

    def __init__(
        self,
        count: Callable[[str], Awaitable[int]],
        *,
        refresh_seconds: float,
        exact_scan_limit: int,
        clock: Callable[[], float] = time.monotonic,
        max_partitions: int = MAX_PARTITIONS_REMEMBERED,
    ) -> None:
        self._count = count
        self._refresh_seconds = refresh_seconds
        self._exact_scan_limit = max(1, exact_scan_limit)
        self._clock = clock
        self._max_partitions = max_partitions
        # fingerprint -> (entries, or None when the count failed; when counted or failed)
        self._sizes: OrderedDict[str, tuple[int | None, float]] = OrderedDict()
        self._counting: dict[str, asyncio.Task[None]] = {}
        # One count at a time: each holds Redis's main thread, and a count is judged by
        # how long it took (`RedisVectorIndex.count_partition`), which a queue of counts
        # started together (the first search of each of 100 partitions) would distort.
        self._one_at_a_time = asyncio.Lock()
        self._failures = ThrottledLogger(logger, interval_seconds=60.0)

    def size(self, fingerprint: str) -> int | None:
        """The partition's last counted size; None until a count succeeded. Starts a
        count in the background when there is none yet or the last one is old."""
        known = self._sizes.get(fingerprint)
        if known is None:
            self._start_count(fingerprint)
            return None
        self._sizes.move_to_end(fingerprint)
        entries, counted_at = known
        if self._clock() - counted_at >= self._kept_seconds(entries):
            self._start_count(fingerprint)
        return entries

    def _kept_seconds(self, entries: int | None) -> float:
        if entries is None:
            return self._refresh_seconds
        scale = max(1.0, entries / self._exact_scan_limit)
        return min(MAX_REFRESH_SECONDS, self._refresh_seconds * scale)

    def _start_count(self, fingerprint: str) -> None:
        if fingerprint in self._counting:
            return
        task = asyncio.get_running_loop().create_task(self._recount(fingerprint))
        self._counting[fingerprint] = task
        task.add_done_callback(lambda _: self._counting.pop(fingerprint, None))

    async def settled(self) -> None:
        """Wait for the counts under way (tests, benchmarks)."""
        if self._counting:
            await asyncio.gather(*self._counting.values(), return_exceptions=True)

    async def _recount(self, fingerprint: str) -> None:
        entries: int | None
        try:
            async with self._one_at_a_time:
                entries = await self._count(fingerprint)
        except Exception as exc:  # a background task: never an unhandled task error
            # Remembered as unknown, so a failing count is retried once per interval,
            # not by every search.
            entries = None
            self._failures.warning(
                "counting a semantic partition failed (%s); RediSearch chooses the search "
                "policy until a count succeeds",
                type(exc).__name__,
            )
        self._sizes[fingerprint] = (entries, self._clock())
        self._sizes.move_to_end(fingerprint)
        while len(self._sizes) > self._max_partitions:
            self._sizes.popitem(last=False)

    async def close(self) -> None:
        """Wait for counts still under way (each is one bounded command)."""
        await self.settled()
