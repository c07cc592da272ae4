from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gateway.cache.limits import StoreLimits
from gateway.cache.purge import PurgeFilter
from gateway.storage.embedded.database import SQLiteDatabase
from gateway.storage.embedded.exact import EXACT_CACHE_SCHEMA, SQLiteExactCache
from gateway.storage.protocols import CachedCompletion, StoreUnavailable

ENTRY = CachedCompletion(
    completion={"choices": [{"message": {"content": "hi"}}]},
    tenant="acme",
    model="m",
    created_at=1.0,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_put_get_and_persistence_across_reopen(tmp_path: Path) -> None:
    cache = await SQLiteExactCache.open(tmp_path)
    await cache.put("k1", ENTRY, ttl_seconds=60)
    assert await cache.get("k1") == ENTRY
    assert await cache.get("k2") is None
    await cache.close()

    reopened = await SQLiteExactCache.open(tmp_path)
    assert await reopened.get("k1") == ENTRY
    assert await reopened.ping()
    await reopened.close()


async def test_expired_entries_are_not_served_and_are_swept(tmp_path: Path) -> None:
    database = SQLiteDatabase(tmp_path / "c.sqlite3")
    await database.open(EXACT_CACHE_SCHEMA)
    clock = Clock()
    cache = SQLiteExactCache(database, clock=clock)
    await cache.put("k", ENTRY, ttl_seconds=10)
    clock.now += 9
    assert await cache.get("k") == ENTRY
    clock.now += 2
    assert await cache.get("k") is None
    assert await cache.sweep_expired() == 1
    await cache.close()
    assert not await cache.ping()


def _answer(text: str) -> CachedCompletion:
    return CachedCompletion(
        completion={"choices": [{"message": {"content": text}}]},
        tenant="acme",
        model="m",
        created_at=1.0,
    )


async def _hot_cache(tmp_path: Path, clock: Clock) -> SQLiteExactCache:
    database = SQLiteDatabase(tmp_path / "c.sqlite3")
    await database.open(EXACT_CACHE_SCHEMA)
    return SQLiteExactCache(database, clock=clock)


async def test_a_repeated_hit_is_served_from_memory_and_never_goes_stale(tmp_path: Path) -> None:
    clock = Clock()
    cache = await _hot_cache(tmp_path, clock)
    await cache.put("k", _answer("first"), ttl_seconds=10)
    assert await cache.get("k") == _answer("first")  # read from the file, then held
    assert await cache.get("k") == _answer("first")
    # A replacement is what the next hit serves, not the held copy.
    await cache.put("k", _answer("second"), ttl_seconds=10)
    assert await cache.get("k") == _answer("second")
    # A purge leaves nothing held behind.
    assert await cache.get("k") == _answer("second")
    assert await cache.purge(PurgeFilter(tenant="acme")) == 1
    assert await cache.get("k") is None
    # Expiry applies to the held copy as to the row.
    await cache.put("k", _answer("third"), ttl_seconds=10)
    assert await cache.get("k") == _answer("third")
    clock.now += 11
    assert await cache.get("k") is None
    await cache.close()


async def test_a_read_under_way_during_a_purge_does_not_bring_the_entry_back(
    tmp_path: Path,
) -> None:
    cache = await _hot_cache(tmp_path, Clock())
    await cache.put("k", _answer("old"), ttl_seconds=60)
    # Both start at once: the read reaches the database thread first, the purge after.
    read = asyncio.ensure_future(cache.get("k"))
    purge = asyncio.ensure_future(cache.purge(PurgeFilter(tenant="acme")))
    assert await read == _answer("old")
    assert await purge == 1
    assert await cache.get("k") is None
    await cache.close()


async def test_hits_served_from_memory_still_keep_their_entries_from_eviction(
    tmp_path: Path,
) -> None:
    database = SQLiteDatabase(tmp_path / "c.sqlite3")
    await database.open(EXACT_CACHE_SCHEMA)
    clock = Clock()
    cache = SQLiteExactCache(database, clock=clock, limits=StoreLimits(max_entries=2))
    await cache.put("a", _answer("a"), ttl_seconds=600)
    clock.now += 1
    await cache.put("b", _answer("b"), ttl_seconds=600)
    clock.now += 1
    assert await cache.get("a") == _answer("a")  # from the file: now held
    clock.now += 1
    assert await cache.get("a") == _answer("a")  # from memory: stamped on the loop
    clock.now += 1
    await cache.put("c", _answer("c"), ttl_seconds=600)  # evicts the least recently used
    assert await cache.get("b") is None
    assert await cache.get("a") == _answer("a")
    # An entry evicted while held is not served from memory either.
    clock.now += 1
    assert await cache.get("c") == _answer("c")
    clock.now += 1
    await cache.put("d", _answer("d"), ttl_seconds=600)  # evicts "a" (used at +3)
    assert await cache.get("a") is None
    await cache.close()


async def test_after_the_database_fails_nothing_held_is_served(tmp_path: Path) -> None:
    cache = await _hot_cache(tmp_path, Clock())
    await cache.put("k", _answer("held"), ttl_seconds=60)
    assert await cache.get("k") == _answer("held")  # now held in memory
    # The file goes away under the store (closed on its own thread, as a lost disk).
    database = cache._db
    database._executor.submit(database.connection.close).result(timeout=5)
    with pytest.raises(StoreUnavailable):
        await cache.get("other")
    # The held copy is not served past the failure: the read fails like any other.
    with pytest.raises(StoreUnavailable):
        await cache.get("k")
