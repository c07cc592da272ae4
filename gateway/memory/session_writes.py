"""Writes a turn's session knowledge cache off the request path.

Writing the cache back (`SessionStore.save`) was awaited on every turn that changed it:
a database-thread or Redis round trip, and the thread and loop wake-ups around it,
about 0.3 ms of a session turn's memory stage (benchmarks/memory_load.py). Nothing in
the turn reads what it wrote, so the write need not finish before the request goes on.

Order is kept all the same: a read of the session waits for that session's write
still under way (`settled`). The next turn of a session normally comes a client round
trip later and finds it done; the write starts at the loop's next turn, long before
the reply is sent (a miss still waits for the upstream), so a replica that serves the
next turn finds it written too. A turn never waits for its own write: a write that
fails is counted as a store failure and logged (the next turn of the session merges
and writes again), and `close` waits for what is still being written, before the
stores close.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Coroutine, Hashable
from typing import Any

from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)


class SessionWrites:
    def __init__(self, on_failure: Callable[[str, str], None] | None = None) -> None:
        self._on_failure = on_failure
        self._writing: set[asyncio.Task[None]] = set()
        self._latest: dict[Hashable, asyncio.Task[None]] = {}  # per session: its last write
        self._failures = ThrottledLogger(logger, interval_seconds=60.0)
        self.failed = 0

    def count_failures_with(self, on_failure: Callable[[str, str], None]) -> None:
        """Where store failures are counted (the metrics, built after the stores)."""
        self._on_failure = on_failure

    @property
    def pending(self) -> int:
        return len(self._writing)

    def submit(self, session: Hashable, write: Coroutine[Any, Any, None]) -> None:
        """Starts `write` of `session` in the background (at the loop's next turn): the
        caller does not wait for it. Handing it over with one loop turn awaited here
        cost a session turn 0.3-0.4 ms (the whole loop turn, other work included)."""
        task = asyncio.ensure_future(write)
        self._writing.add(task)
        self._latest[session] = task
        task.add_done_callback(functools.partial(self._finished, session))

    async def settled(self, session: Hashable) -> None:
        """Waits until `session`'s last write is done (at once when none is under
        way); its failure is reported where it finishes, never raised here."""
        task = self._latest.get(session)
        if task is not None and not task.done():
            await asyncio.wait((task,))

    async def drain(self) -> None:
        """Waits for the writes under way (tests, shutdown); their failures are reported
        as they finish, never raised here."""
        while self._writing:
            await asyncio.gather(*self._writing, return_exceptions=True)

    def _finished(self, session: Hashable, task: asyncio.Task[None]) -> None:
        self._writing.discard(task)
        if self._latest.get(session) is task:
            del self._latest[session]
        if task.cancelled():
            return
        error = task.exception()
        if error is None:
            return
        self.failed += 1
        if self._on_failure is not None:
            self._on_failure("memory", "session_save")
        self._failures.warning(
            "session cache write failed (%s); the next turn writes it again",
            type(error).__name__,
        )
