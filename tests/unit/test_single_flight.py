"""Single flight with in-process fakes: one leader per key, bounded waits, failed
leaders do not poison followers, replicas share through the lock and the exact cache."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.runner import ChatPipeline, CompletionOutcome
from gateway.pipeline.single_flight import SingleFlight
from gateway.providers.protocol import UpstreamReport
from gateway.storage.embedded.lock import InProcessLock
from gateway.storage.protocols import CachedCompletion
from tests.unit.test_pipeline import MemoryCache, ScriptedProvider, _context

ANSWER = {"choices": [{"message": {"content": "shared"}}]}


async def test_one_leader_and_every_follower_gets_its_answer() -> None:
    flights = SingleFlight(None, None)
    joined = await flights.join("k", 5)
    assert joined.flight is not None
    followers = [asyncio.create_task(flights.join("k", 5)) for _ in range(5)]
    await asyncio.sleep(0)
    assert flights.in_flight() == 1
    flights.share(joined.flight, ANSWER)
    await flights.release(joined.flight)
    results = await asyncio.gather(*followers)
    assert all(result.shared == ANSWER and result.flight is None for result in results)
    assert flights.in_flight() == 0
    assert (await flights.join("k", 5)).flight is not None  # a new flight afterwards


async def test_a_failed_leader_releases_followers_with_nothing() -> None:
    flights = SingleFlight(None, None)
    joined = await flights.join("k", 5)
    assert joined.flight is not None
    follower = asyncio.create_task(flights.join("k", 5))
    await asyncio.sleep(0)
    flights.share(joined.flight, None)
    await flights.release(joined.flight)
    assert (await follower).shared is None


async def test_waiting_is_bounded() -> None:
    flights = SingleFlight(None, None)
    assert (await flights.join("k", 5)).flight is not None  # a leader that never ends
    started = time.monotonic()
    result = await flights.join("k", 0.1)
    assert result.shared is None and result.flight is None
    assert time.monotonic() - started < 5.0  # bounded by the 0.1 s wait; a hang never ends


async def test_replicas_share_through_the_lock_and_the_cache() -> None:
    lock, cache = InProcessLock(), MemoryCache()
    replica_a = SingleFlight(lock, cache, poll_seconds=0.01)
    replica_b = SingleFlight(lock, cache, poll_seconds=0.01)
    leading = await replica_a.join("k", 5)
    assert leading.flight is not None
    remote = asyncio.create_task(replica_b.join("k", 5))
    await asyncio.sleep(0.05)
    assert not remote.done()  # polling while A holds the lease
    await cache.put("k", CachedCompletion(ANSWER, "t", "m", 0.0), 60)
    await replica_a.release(leading.flight)
    assert (await remote).shared == ANSWER


async def test_a_replica_takes_over_when_the_remote_leader_stored_nothing() -> None:
    lock, cache = InProcessLock(), MemoryCache()
    replica_a = SingleFlight(lock, cache, poll_seconds=0.01)
    replica_b = SingleFlight(lock, cache, poll_seconds=0.01)
    leading = await replica_a.join("k", 5)
    assert leading.flight is not None
    remote = asyncio.create_task(replica_b.join("k", 5))
    await asyncio.sleep(0.03)
    await replica_a.release(leading.flight)  # e.g. its answer was not cacheable
    taken = await remote
    assert taken.flight is not None and taken.flight.lease_token is not None


class SlowProvider(ScriptedProvider):
    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.fail = fail

    async def complete(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> dict[str, Any]:
        await asyncio.sleep(0.05)
        if self.fail:
            self.calls += 1
            raise RuntimeError("upstream broke")
        return await super().complete(body, report=report)


async def test_concurrent_identical_misses_make_one_upstream_call() -> None:
    provider = SlowProvider()
    pipeline = ChatPipeline(
        provider, ExactCacheStage(MemoryCache()), single_flight=SingleFlight(None, None)
    )
    contexts = [_context() for _ in range(8)]
    outcomes = await asyncio.gather(*(pipeline.handle(ctx) for ctx in contexts))
    assert provider.calls == 1
    assert all(isinstance(outcome, CompletionOutcome) for outcome in outcomes)
    texts = {o.completion["choices"][0]["message"]["content"] for o in outcomes}  # type: ignore[union-attr]
    assert texts == {"ok"}
    assert sum(outcome.decision.coalesced for outcome in outcomes) == 7


async def test_followers_of_a_failed_leader_make_their_own_calls() -> None:
    provider = SlowProvider(fail=True)
    pipeline = ChatPipeline(
        provider, ExactCacheStage(MemoryCache()), single_flight=SingleFlight(None, None)
    )
    results = await asyncio.gather(
        *(pipeline.handle(_context()) for _ in range(4)), return_exceptions=True
    )
    assert all(isinstance(result, RuntimeError) for result in results)
    assert provider.calls == 4  # nobody was handed the leader's failure


async def test_opted_out_requests_are_not_coalesced() -> None:
    from gateway.pipeline.cache_controls import CacheControl

    provider = SlowProvider()
    pipeline = ChatPipeline(
        provider, ExactCacheStage(MemoryCache()), single_flight=SingleFlight(None, None)
    )
    await asyncio.gather(
        *(pipeline.handle(_context(cache_control=CacheControl(no_store=True))) for _ in range(3))
    )
    assert provider.calls == 3


async def test_a_request_arriving_while_the_answer_is_stored_follows() -> None:
    # Between `share` and `release` (the leader is writing the cache) the flight is
    # still open: a late request gets the answer instead of leading a second call.
    flights = SingleFlight(None, None)
    joined = await flights.join("k", 5)
    assert joined.flight is not None
    flights.share(joined.flight, ANSWER)
    late = await flights.join("k", 5)
    assert late.shared == ANSWER and late.flight is None
    await flights.release(joined.flight)
    assert flights.in_flight() == 0


async def test_a_would_be_leader_reads_the_cache_again() -> None:
    flights = SingleFlight(None, None)

    async def recheck() -> dict[str, Any] | None:
        return ANSWER

    joined = await flights.join("k", 5, recheck=recheck)
    assert joined.shared == ANSWER and joined.flight is None
    assert flights.in_flight() == 0


class HeldReads(MemoryCache):
    """Each read answers with what was stored when it started, and, while `gate` is set
    up, only once the gate opens: a read that left before an identical request's answer
    was written, as under concurrency. Counts the reads."""

    def __init__(self) -> None:
        super().__init__()
        self.gate: asyncio.Event | None = None
        self.reads = 0
        self.held = asyncio.Event()  # set once a read waits at the gate

    async def get(self, key: str) -> CachedCompletion | None:
        self.reads += 1
        seen = await super().get(key)
        if self.gate is not None:
            self.held.set()
        if self.gate is not None:
            await self.gate.wait()
        return seen


async def test_a_request_whose_exact_read_raced_the_store_makes_no_second_call() -> None:
    provider = ScriptedProvider()
    cache = HeldReads()
    pipeline = ChatPipeline(
        provider, ExactCacheStage(cache), single_flight=SingleFlight(None, None)
    )
    first = await pipeline.handle(_context())
    assert isinstance(first, CompletionOutcome)
    cache.gate = asyncio.Event()
    second_task = asyncio.create_task(pipeline.handle(_context()))
    await cache.held.wait()  # the second request's read has left, seeing nothing
    await first.after_response()  # stored, flight ended
    cache.gate.set()
    second = await second_task
    assert provider.calls == 1
    assert isinstance(second, CompletionOutcome)
    assert second.completion["choices"][0]["message"]["content"] == "ok"
    assert second.decision.layer == "exact"


async def test_a_lone_miss_reads_the_exact_cache_once() -> None:
    """Nothing was stored under its key since its own read started (one process): the
    would-be leader does not read the cache a second time."""
    provider = ScriptedProvider()
    cache = HeldReads()
    pipeline = ChatPipeline(
        provider, ExactCacheStage(cache), single_flight=SingleFlight(None, None)
    )
    outcome = await pipeline.handle(_context())
    assert isinstance(outcome, CompletionOutcome)
    assert provider.calls == 1 and cache.reads == 1
    await outcome.after_response()
    again = await pipeline.handle(_context())  # stored before its read: an exact hit
    assert isinstance(again, CompletionOutcome) and again.decision.layer == "exact"
    assert provider.calls == 1 and cache.reads == 2


async def test_replicas_always_read_the_cache_again_before_leading() -> None:
    """With a lock, other replicas store too: the would-be leader reads again."""
    cache = HeldReads()
    flights = SingleFlight(InProcessLock(), cache)
    joined = await flights.join("k", 5, since=flights.mark())
    assert joined.flight is not None and cache.reads == 1
    await flights.release(joined.flight)


def test_forgotten_stores_make_every_older_read_count_as_raced() -> None:
    flights = SingleFlight(None, None)
    since = flights.mark()
    flights.note_stored("k")
    for index in range(5000):  # more keys than are remembered: "k" is forgotten
        flights.note_stored(f"other-{index}")
    assert flights._may_have_been_stored("k", since)
    assert flights._may_have_been_stored("never-stored", since)
    assert not flights._may_have_been_stored("never-stored", flights.mark())
