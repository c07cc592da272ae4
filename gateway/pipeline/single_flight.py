"""Single flight: concurrent identical cacheable misses cause one upstream call.

The first request for an exact-cache key leads: it forwards, and its answer is handed
to every request for the same key that arrived meanwhile (followers). Within a process
followers wait on the leader's future. Across replicas (Redis backend) the leader also
holds a lease in the shared lock; a replica that finds the lease taken polls the exact
cache, where the leader stores its answer, and takes the lease itself if it frees up.

Nothing here may make a request worse than having no single flight:
- waits are bounded (`wait_seconds`); after that a follower forwards on its own;
- a leader that fails, is cancelled (client gone) or produces nothing cacheable hands
  followers `None`, and each forwards on its own (or gets its own error);
- a lock store that fails is treated as "nobody to wait for".
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.storage.protocols import ExactCache, Lock
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

Completion = dict[str, Any]
# Reads the exact cache again for this request (None: nothing stored).
Recheck = Callable[[], Awaitable[Completion | None]]
_POLL_SECONDS = 0.05
# Keys whose last store in this process is remembered for `join(since=...)`; a request
# older than the oldest one forgotten reads the cache again, as without the memory.
_REMEMBERED_STORES = 4096


@dataclass(slots=True)
class Flight:
    """A leader's promise to the followers of its key."""

    key: str
    future: asyncio.Future[Completion | None]
    lease_token: str | None = None
    followers: int = field(default=0)


@dataclass(frozen=True, slots=True)
class Joined:
    """`flight` set: this request leads and must call `SingleFlight.share` with its
    answer and `SingleFlight.release` once it is stored (both also on errors). Otherwise
    `shared` is another request's answer, or None: forward on your own."""

    flight: Flight | None = None
    shared: Completion | None = None


class SingleFlight:
    def __init__(
        self,
        lock: Lock | None,
        exact: ExactCache | None,
        clock: Callable[[], float] = time.monotonic,
        poll_seconds: float = _POLL_SECONDS,
    ) -> None:
        """`lock` and `exact` coordinate replicas (Redis backend); None: one process."""
        self._lock = lock
        self._exact = exact
        self._clock = clock
        self._poll_seconds = poll_seconds
        self._flights: dict[str, Flight] = {}
        self._failures = ThrottledLogger(logger, interval_seconds=60.0)
        # Answers this process stored, numbered in order: key -> number of its last.
        self._stores = 0
        self._stored_at: OrderedDict[str, int] = OrderedDict()
        self._forgotten_up_to = 0

    def mark(self) -> int:
        """Where this process's stores are now; taken before a request's exact read
        starts and handed to `join` as `since`."""
        return self._stores

    def note_stored(self, key: str) -> None:
        """An answer for `key` was written to the exact cache by this process."""
        self._stores += 1
        self._stored_at[key] = self._stores
        self._stored_at.move_to_end(key)
        if len(self._stored_at) > _REMEMBERED_STORES:
            _, number = self._stored_at.popitem(last=False)
            self._forgotten_up_to = number

    def _may_have_been_stored(self, key: str, since: int | None) -> bool:
        """Whether an exact read that started at `since` may have missed a stored answer.
        One process with nobody else writing (no lock: the embedded store) knows every
        store: a read that started after one sees it (the store's one thread runs them in
        order). Replicas write too, so with a lock the cache is always read again."""
        if since is None or self._lock is not None or self._forgotten_up_to > since:
            return True
        stored = self._stored_at.get(key)
        return stored is not None and stored > since

    def in_flight(self) -> int:
        return len(self._flights)

    async def join(
        self,
        key: str,
        wait_seconds: float,
        recheck: Recheck | None = None,
        since: int | None = None,
    ) -> Joined:
        """Lead or follow the flight for `key`. `recheck` reads the exact cache again
        for a request that is about to lead: its own exact read may have missed just
        before an identical request stored the answer (and ended its flight), so
        without it that request would make a second upstream call. `since` (`mark()`
        before the request's exact read): skip that read when nothing was stored under
        `key` since then (one process, see `_may_have_been_stored`)."""
        flight = self._flights.get(key)
        if flight is not None:
            flight.followers += 1
            return Joined(shared=await self._wait(flight, wait_seconds))
        # Claimed before the first await: a concurrent request of this process now
        # finds it and follows.
        flight = Flight(key, asyncio.get_running_loop().create_future())
        self._flights[key] = flight
        try:
            if self._lock is not None:
                joined = await self._lead_or_poll(flight, wait_seconds)
                if joined.flight is None:
                    return joined
            shared = (
                await self._recheck(flight.key, recheck)
                if self._may_have_been_stored(key, since)
                else None
            )
        except BaseException:
            # Followers forward on their own; a lease taken expires by itself.
            self._settle(flight, None)
            raise
        if shared is None:
            return Joined(flight=flight)
        self.share(flight, shared)
        await self.release(flight)
        return Joined(shared=shared)

    async def _recheck(self, key: str, recheck: Recheck | None) -> Completion | None:
        if recheck is None:
            return await self._cached(key)
        try:
            return await recheck()
        except Exception:  # a failing store: nobody to wait for, forward
            return None

    async def _lead_or_poll(self, flight: Flight, wait_seconds: float) -> Joined:
        assert self._lock is not None
        deadline = self._clock() + wait_seconds
        while True:
            try:
                token = await self._lock.acquire(_lease_key(flight.key), wait_seconds)
            except Exception as exc:
                self._failures.warning("single-flight lease failed (%s)", type(exc).__name__)
                return Joined(flight=flight)  # lead locally; replicas may duplicate
            if token is not None:
                # The caller reads the exact cache again: the remote leader may have
                # stored its answer just before releasing the lease.
                flight.lease_token = token
                return Joined(flight=flight)
            # Another replica leads: its answer lands in the exact cache.
            shared = await self._cached(flight.key)
            if shared is not None or self._clock() >= deadline:
                self._settle(flight, shared)
                return Joined(shared=shared)
            await asyncio.sleep(self._poll_seconds)

    async def _cached(self, key: str) -> Completion | None:
        if self._exact is None:
            return None
        try:
            entry = await self._exact.get(key)
        except Exception:
            return None
        return None if entry is None else entry.completion

    async def _wait(self, flight: Flight, wait_seconds: float) -> Completion | None:
        try:
            async with asyncio.timeout(wait_seconds):
                # shield: a follower that gives up must not cancel the leader's future.
                return await asyncio.shield(flight.future)
        except TimeoutError:
            return None

    def share(self, flight: Flight, completion: Completion | None) -> None:
        """Hand the leader's answer to this process's followers (None: nothing to
        share). The flight stays open until `release`: a request that arrives while
        the answer is being stored still follows it instead of leading a second call.
        Replicas get the answer from the exact cache once it is stored."""
        if not flight.future.done():
            flight.future.set_result(completion)

    async def release(self, flight: Flight) -> None:
        """After the answer was stored (or will not be): free the replicas' lease."""
        self._settle(flight, None)  # a no-op when already shared
        if flight.lease_token is not None and self._lock is not None:
            token, flight.lease_token = flight.lease_token, None
            try:
                await self._lock.release(_lease_key(flight.key), token)
            except Exception as exc:  # the lease expires by itself
                self._failures.warning(
                    "single-flight lease release failed (%s)", type(exc).__name__
                )

    def _settle(self, flight: Flight, completion: Completion | None) -> None:
        if not flight.future.done():
            flight.future.set_result(completion)
        if self._flights.get(flight.key) is flight:
            del self._flights[flight.key]


def _lease_key(key: str) -> str:
    return f"flight:{key}"
