"""Counts the use of injected memories off the request path.

Writing a turn's access counts (`MemoryStore.touch`) took ~1.5 ms awaited on every
request that injected memories (benchmarks/memory_load.py). Ranking reads the counts
through a scope index that is up to `scope_max_age_seconds` old anyway, so the write
need not finish before the response: the memory stage queues it here and one
background task writes the queue in order, each use with the time of its request.

Nothing is lost silently: a write that fails stays queued (the next use, or shutdown,
tries again) and is counted as a store failure and logged; the queue is bounded
(`max_pending_writes`), and what a full queue refuses is counted and logged too.
`close` (at shutdown, before the stores close) writes what is still queued.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.storage.protocols import MemoryStore
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

DEFAULT_MAX_PENDING_WRITES = 10_000


@dataclass(frozen=True, slots=True)
class _Use:
    tenant: str
    memory_ids: tuple[str, ...]
    at: float  # the request's time: what `last_access_at` becomes


class AccessRecorder:
    def __init__(
        self,
        store: MemoryStore,
        on_failure: Callable[[str, str], None] | None = None,
        *,
        max_pending_writes: int = DEFAULT_MAX_PENDING_WRITES,
    ) -> None:
        self._store = store
        self._on_failure = on_failure
        self._max_pending = max_pending_writes
        self._pending: deque[_Use] = deque()
        self._writer: asyncio.Task[None] | None = None
        self._failures = ThrottledLogger(logger, interval_seconds=60.0)
        self.failed_writes = 0  # store errors (the use stays queued)
        self.refused = 0  # uses a full queue did not take

    def count_failures_with(self, on_failure: Callable[[str, str], None]) -> None:
        """Where store failures are counted (the metrics, built after the stores)."""
        self._on_failure = on_failure

    @property
    def pending(self) -> int:
        return len(self._pending)

    def record(self, tenant: str, memory_ids: Sequence[str], at: float) -> None:
        """Queue one use of `memory_ids` (a request's injected memories); returns at once."""
        if not memory_ids:
            return
        if len(self._pending) >= self._max_pending:
            self.refused += 1
            self._report("queue_full", "memory access counts not recorded: the queue is full")
            return
        self._pending.append(_Use(tenant, tuple(memory_ids), at))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_pending(), name="memory-access")

    async def drain(self) -> None:
        """Wait until the queue is written, or its head failed (tests, shutdown)."""
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)

    async def close(self) -> None:
        """Write what is queued (one more try for what failed before)."""
        await self.drain()
        await self._write_pending()
        if self._pending:
            logger.warning(
                "memory access counts of %d requests not recorded at shutdown", len(self._pending)
            )

    async def _write_pending(self) -> None:
        while self._pending:
            use = self._pending[0]
            try:
                await self._store.touch(use.tenant, use.memory_ids, use.at)
            except Exception as exc:
                # Kept at the head: written by the next writer, in order.
                self.failed_writes += 1
                self._report(
                    "touch", f"memory access count write failed ({type(exc).__name__}); kept"
                )
                return
            self._pending.popleft()

    def _report(self, operation: str, message: str) -> None:
        if self._on_failure is not None:
            self._on_failure("memory", operation)
        self._failures.warning("%s", message)
