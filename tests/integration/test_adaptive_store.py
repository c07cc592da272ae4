"""The adaptive counters' store, embedded and on a real Redis: increments add (two
writers, as two replicas, sum), and what was written is read back after a reopen."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from gateway.adaptive.stats import AdaptiveStats, Scope
from gateway.storage.embedded.adaptive import SQLiteAdaptiveStore
from gateway.storage.protocols import AdaptiveCounterStore
from gateway.storage.redis.adaptive import RedisAdaptiveStore
from gateway.storage.redis.backend import RedisBackend
from gateway.testing.redis_server import RedisServer

Opener = Callable[[], Awaitable[AdaptiveCounterStore]]


@pytest.fixture(params=["embedded", "redis"])
async def open_store(
    request: pytest.FixtureRequest, tmp_path: Path, prefix: str
) -> AsyncIterator[Opener]:
    opened: list[AdaptiveCounterStore] = []
    backends: list[RedisBackend] = []

    async def opener() -> AdaptiveCounterStore:
        store: AdaptiveCounterStore
        if request.param == "embedded":
            store = await SQLiteAdaptiveStore.open(tmp_path)
        else:
            server: RedisServer = request.getfixturevalue("redis_server")
            backend = await RedisBackend.open(server.url, prefix=prefix, index_name="test-4d")
            backends.append(backend)
            store = RedisAdaptiveStore(backend)
        opened.append(store)
        return store

    yield opener
    for store in opened:
        await store.close()
    for backend in backends:
        await backend.close()


async def test_increments_add_up_and_survive_a_reopen(open_store: Opener) -> None:
    first = await open_store()
    await first.add({"acme": {"traffic:40": 1.0, "same:40": 0.75}})
    await first.add({"acme": {"traffic:40": 2.0}, "globex": {"judged:3": 1.0}})
    if isinstance(first, SQLiteAdaptiveStore):
        await first.close()
    second = await open_store()
    await second.add({"acme": {"traffic:40": 0.5}})
    loaded = await second.load()
    assert loaded["acme"] == {"traffic:40": 3.5, "same:40": 0.75}
    assert loaded["globex"] == {"judged:3": 1.0}


async def test_two_processes_share_the_statistics_after_a_sync(open_store: Opener) -> None:
    one = AdaptiveStats(await open_store(), sync_seconds=3600)
    two = AdaptiveStats(await open_store(), sync_seconds=3600)
    scope = Scope("acme")
    one.add_verdict([scope], 0.9, 1.0)
    two.add_verdict([scope], 0.9, 0.0)
    await one.sync()
    await two.sync()
    await one.sync()
    for stats in (one, two):
        buckets = stats.view(scope).buckets
        assert buckets.total_judged() == 2.0
        assert sum(buckets.judged_same) == 1.0
