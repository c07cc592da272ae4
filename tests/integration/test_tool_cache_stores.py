"""The tool-result cache's stores, the same checks on SQLite and on a real Redis: per
tenant, expiry, literal prefix deletes with accounting, LRU caps, the expiry sweep."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gateway.cache.eviction import CapacityLedger, EvictionReason
from gateway.cache.limits import StoreLimits
from gateway.storage.agent_protocols import ToolCacheStore
from gateway.storage.embedded.tool_cache import SQLiteToolCache
from gateway.storage.redis.capacity import RedisCapacity
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.tool_cache import RedisToolCache
from gateway.testing.redis_server import RedisServer
from gateway.toolcache.records import ToolCacheEntry, ToolCacheFilter

LIMITS = StoreLimits(max_entries=100, max_bytes=1 << 20, max_entries_per_tenant=3)


@dataclass
class Opened:
    store: ToolCacheStore
    ledger: CapacityLedger
    now: list[float]
    backend: str


@pytest.fixture(params=["embedded", "redis"])
async def opened(
    request: pytest.FixtureRequest, tmp_path: Path, prefix: str
) -> AsyncIterator[Opened]:
    ledger = CapacityLedger()
    now = [time.time()]
    connection: RedisConnection | None = None
    store: SQLiteToolCache | RedisToolCache
    if request.param == "embedded":
        store = await SQLiteToolCache.open(tmp_path, LIMITS, ledger, clock=lambda: now[0])
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        connection = RedisConnection(server.url)
        # The books' clock is the test's too: with the real one, writes and touches
        # within one millisecond tie, and the LRU order falls back to the key names.
        capacity = RedisCapacity(
            connection,
            f"{prefix}:capacity:tool_cache",
            "tool_cache",
            LIMITS,
            ledger,
            clock=lambda: now[0],
        )
        store = RedisToolCache(connection, prefix, capacity, clock=lambda: now[0])
    yield Opened(store, ledger, now, request.param)
    await store.close()
    if connection is not None:
        await connection.close()


def _entry(opened: Opened, key: str, tenant: str = "acme", **fields: str) -> ToolCacheEntry:
    values = {"namespace": "", "tool": "search", "method": "", "target": "idx"}
    values.update(fields)
    return ToolCacheEntry(
        key=key,
        tenant=tenant,
        result=b'{"ok":true}',
        stored_at=opened.now[0],
        expires_at=opened.now[0] + 60,
        **values,
    )


async def test_entries_are_per_tenant_and_expire(opened: Opened) -> None:
    entry = _entry(opened, "k1")
    await opened.store.put(entry)
    assert await opened.store.get("acme", "k1") == entry
    assert await opened.store.get("globex", "k1") is None
    opened.now[0] += 61
    assert await opened.store.get("acme", "k1") is None


async def test_prefix_delete_is_literal_and_keeps_the_books(opened: Opened) -> None:
    store = opened.store
    await store.put(_entry(opened, "a", target="https://x.test/100%_off/a"))
    await store.put(_entry(opened, "b", target="https://x.test/100%_off/b", tool="fetch"))
    # Would match a LIKE '100%_off%' pattern, must not match the literal prefix.
    await store.put(_entry(opened, "c", target="https://x.test/100XYoff/c"))
    await store.put(_entry(opened, "d", tenant="globex", target="https://x.test/100%_off/d"))
    deleted = await store.delete(ToolCacheFilter("acme", target_prefix="https://x.test/100%_off/"))
    assert deleted == 2
    assert await store.get("acme", "c") is not None
    assert await store.get("globex", "d") is not None
    assert opened.ledger.usage()["tool_cache"].entries == 2
    assert await store.delete(ToolCacheFilter("acme", tool="search")) == 1
    assert await store.delete(ToolCacheFilter("acme")) == 0


async def test_tenant_cap_evicts_the_least_recently_used(opened: Opened) -> None:
    store = opened.store
    for index in range(3):
        opened.now[0] += 1
        await store.put(_entry(opened, f"k{index}"))
    opened.now[0] += 1
    assert await store.get("acme", "k0") is not None  # k1 is now the least recent
    opened.now[0] += 1
    await store.put(_entry(opened, "k3"))
    assert await store.get("acme", "k1") is None
    assert all([await store.get("acme", key) is not None for key in ("k0", "k2", "k3")])
    evictions = opened.ledger.evictions()
    assert evictions[("tool_cache", EvictionReason.TENANT_CAPACITY.value)] == 1


async def test_the_sweep_deletes_expired_embedded_rows(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    now = [1000.0]
    store = await SQLiteToolCache.open(tmp_path, LIMITS, ledger, clock=lambda: now[0])
    opened = Opened(store, ledger, now, "embedded")
    await store.put(_entry(opened, "old"))
    now[0] += 61
    await store.put(_entry(opened, "new"))
    assert await store.sweep_expired() == 1
    assert ledger.usage()["tool_cache"].entries == 1
    assert ledger.evictions()[("tool_cache", "expired")] == 1
    await store.close()
    # Reopened, the file still holds the live entry, and its count.
    reopened = await SQLiteToolCache.open(tmp_path, LIMITS, ledger, clock=lambda: now[0])
    assert await reopened.get("acme", "new") is not None
    assert ledger.usage()["tool_cache"].entries == 1
    await reopened.close()
