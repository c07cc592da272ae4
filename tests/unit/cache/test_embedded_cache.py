from __future__ import annotations

from pathlib import Path

from gateway.storage.embedded.database import SQLiteDatabase
from gateway.storage.embedded.exact import EXACT_CACHE_SCHEMA, SQLiteExactCache
from gateway.storage.protocols import CachedCompletion

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
