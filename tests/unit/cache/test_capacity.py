"""Caps, LRU eviction and the expiry sweep of the embedded stores (issue 15, item 7)."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gateway.cache.eviction import CapacityLedger, EvictionReason, capacity_snapshot
from gateway.cache.limits import CapacitySettings, StoreLimits
from gateway.cache.sweeper import start_sweeper, stop_sweeper
from gateway.pipeline.namespaces import NamespaceLimiter
from gateway.settings import ConfigError, parse_config
from gateway.storage.embedded.database import SQLiteDatabase
from gateway.storage.embedded.exact import SQLiteExactCache
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.embedded.vectors import EmbeddedVectorIndex
from gateway.storage.protocols import CachedCompletion, SemanticEntry, SessionItem

DIM = 8


class Clock:
    """Advances a little on every read, so every write and hit has its own time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def completion(text: str) -> CachedCompletion:
    return CachedCompletion(
        completion={"choices": [{"message": {"content": text}}]},
        tenant="acme",
        model="m",
        created_at=1.0,
    )


def for_tenant(tenant: str, text: str) -> CachedCompletion:
    entry = completion(text)
    return CachedCompletion(entry.completion, tenant, entry.model, entry.created_at)


async def open_exact(tmp_path: Path, limits: StoreLimits, ledger: CapacityLedger, clock: Clock):
    database = SQLiteDatabase(tmp_path / "gateway.sqlite3")
    from gateway.storage.embedded.exact import (
        EXACT_CACHE_INDEXES,
        EXACT_CACHE_MIGRATIONS,
        EXACT_CACHE_SCHEMA,
    )

    await database.open(EXACT_CACHE_SCHEMA, EXACT_CACHE_MIGRATIONS, EXACT_CACHE_INDEXES)
    return SQLiteExactCache(database, clock=clock, limits=limits, ledger=ledger)


async def full_cache_of_three(tmp_path: Path, ledger: CapacityLedger) -> SQLiteExactCache:
    """An exact cache capped at 3 entries, holding "a", "b" and "c" (written in that order)."""
    cache = await open_exact(tmp_path, StoreLimits(max_entries=3), ledger, Clock())
    for key in ("a", "b", "c"):
        await cache.put(key, completion(key), ttl_seconds=60)
    return cache


def rows(path: Path, sql: str) -> int:
    with sqlite3.connect(path) as connection:
        return int(connection.execute(sql).fetchone()[0])


# --- exact cache -------------------------------------------------------------------------


async def test_exact_cache_keeps_at_most_max_entries_and_evicts_least_recently_used(
    tmp_path: Path,
) -> None:
    ledger = CapacityLedger()
    cache = await full_cache_of_three(tmp_path, ledger)
    assert await cache.get("a") is not None  # "a" is now the most recently used
    await cache.put("d", completion("d"), ttl_seconds=60)
    await cache.put("e", completion("e"), ttl_seconds=60)
    held = [key for key in "abcde" if await cache.get(key) is not None]
    assert held == ["a", "d", "e"]
    assert ledger.evictions() == {("exact", "capacity"): 2}
    assert ledger.usage()["exact"].entries == 3
    await cache.close()
    assert rows(tmp_path / "gateway.sqlite3", "SELECT COUNT(*) FROM exact_cache") == 3


async def test_exact_cache_byte_cap(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    cache = await open_exact(tmp_path, StoreLimits(max_bytes=4096), ledger, Clock())
    for index in range(20):
        await cache.put(f"k{index}", completion("x" * 500 + str(index)), ttl_seconds=60)
    usage = ledger.usage()["exact"]
    assert usage.bytes <= 4096
    assert 0 < usage.entries < 20
    assert await cache.get("k19") is not None
    assert await cache.get("k0") is None
    await cache.close()


async def test_one_tenant_flooding_does_not_evict_another_tenants_entries(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    limits = StoreLimits(max_entries=10, max_entries_per_tenant=5)
    cache = await open_exact(tmp_path, limits, ledger, Clock())
    for index in range(4):
        await cache.put(f"quiet{index}", for_tenant("quiet", "q"), ttl_seconds=60)
    for index in range(100):
        await cache.put(f"flood{index}", for_tenant("flood", "f"), ttl_seconds=60)
    assert all([await cache.get(f"quiet{index}") is not None for index in range(4)])
    flood_held = [index for index in range(100) if await cache.get(f"flood{index}") is not None]
    assert flood_held == [95, 96, 97, 98, 99]
    assert ledger.evictions() == {("exact", "tenant_capacity"): 95}
    await cache.close()


async def test_replacing_an_entry_is_not_counted_twice(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    cache = await open_exact(tmp_path, StoreLimits(max_entries=2), ledger, Clock())
    for _ in range(5):
        await cache.put("same", completion("one"), ttl_seconds=60)
    await cache.put("other", completion("two"), ttl_seconds=60)
    assert await cache.get("same") is not None
    assert ledger.evictions() == {}
    assert ledger.usage()["exact"].entries == 2
    await cache.close()


async def test_a_lowered_cap_applies_when_the_cache_is_reopened(tmp_path: Path) -> None:
    cache = await SQLiteExactCache.open(tmp_path)
    for index in range(10):
        await cache.put(f"k{index}", completion(str(index)), ttl_seconds=60)
    await cache.close()
    ledger = CapacityLedger()
    reopened = await SQLiteExactCache.open(tmp_path, StoreLimits(max_entries=4), ledger)
    assert ledger.usage()["exact"].entries == 4
    assert rows(tmp_path / "gateway.sqlite3", "SELECT COUNT(*) FROM exact_cache") == 4
    await reopened.close()


async def test_a_data_directory_of_the_previous_layout_opens_and_is_capped(tmp_path: Path) -> None:
    # The exact-cache table as the previous version wrote it (no size or recency).
    with sqlite3.connect(tmp_path / "gateway.sqlite3") as connection:
        connection.executescript(
            "CREATE TABLE exact_cache (key TEXT PRIMARY KEY, tenant TEXT NOT NULL, "
            "model TEXT NOT NULL, completion BLOB NOT NULL, created_at REAL NOT NULL, "
            "expires_at REAL NOT NULL, namespace TEXT NOT NULL DEFAULT '{}');"
        )
        connection.executemany(
            "INSERT INTO exact_cache VALUES (?, 'acme', 'm', ?, 1.0, 1e12, '{}')",
            [(f"old{index}", b'{"choices": []}') for index in range(5)],
        )
    ledger = CapacityLedger()
    cache = await SQLiteExactCache.open(tmp_path, StoreLimits(max_entries=3), ledger)
    assert ledger.usage()["exact"].entries == 3
    assert ledger.usage()["exact"].bytes > 0
    await cache.put("new", completion("new"), ttl_seconds=60)
    assert await cache.get("new") is not None
    assert ledger.usage()["exact"].entries == 3
    await cache.close()


async def test_the_sweep_deletes_expired_exact_entries_from_disk(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    clock = Clock()
    cache = await open_exact(tmp_path, StoreLimits(), ledger, clock)
    for index in range(5):
        await cache.put(f"k{index}", completion(str(index)), ttl_seconds=10)
    await cache.put("long", completion("long"), ttl_seconds=1000)
    clock.now += 11
    assert await cache.sweep_expired() == 5
    assert rows(tmp_path / "gateway.sqlite3", "SELECT COUNT(*) FROM exact_cache") == 1
    assert ledger.evictions() == {("exact", "expired"): 5}
    assert ledger.usage()["exact"].entries == 1
    await cache.close()


async def test_a_sweep_larger_than_one_step_removes_everything_expired(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    clock = Clock()
    cache = await open_exact(tmp_path, StoreLimits(), ledger, clock)
    for index in range(2500):
        await cache.put(f"k{index}", completion("x"), ttl_seconds=10)
    await cache.put("long", completion("long"), ttl_seconds=1000)
    clock.now += 20
    assert await cache.sweep_expired() == 2500
    assert ledger.usage()["exact"].entries == 1
    assert await cache.get("long") is not None
    await cache.close()


# --- semantic index ----------------------------------------------------------------------


def semantic_entry(entry_id: str, tenant: str = "acme", fingerprint: str = "fp", ttl: float = 60):
    return SemanticEntry(
        entry_id=entry_id,
        tenant=tenant,
        model="m",
        fingerprint=fingerprint,
        query_text=f"query {entry_id}",
        completion={"choices": [{"message": {"content": entry_id}}]},
        created_at=1000.0,
        expires_at=1000.0 + ttl,
    )


def vector_for(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=DIM).astype(np.float32)


async def test_index_evicts_least_recently_used_from_memory_and_disk(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    index = await EmbeddedVectorIndex.open(
        tmp_path, "test-8d", clock=Clock(), limits=StoreLimits(max_entries=3), ledger=ledger
    )
    for seed in range(3):
        await index.add(semantic_entry(f"e{seed}", fingerprint=f"fp{seed}"), vector_for(seed))
    # Searched for without being served changes nothing; served, "e0" is the newest.
    assert (await index.search("fp1", vector_for(1), 1))[0][0].entry_id == "e1"
    index.touch("e0")
    for seed in range(3, 5):
        await index.add(semantic_entry(f"e{seed}", fingerprint=f"fp{seed}"), vector_for(seed))
    assert await index.count() == 3
    found = {
        seed
        for seed in range(5)
        if [hit for hit, _ in await index.search(f"fp{seed}", vector_for(seed), 1)]
    }
    assert found == {0, 3, 4}
    # Emptied partitions are dropped: memory follows the entries, not the fingerprints seen.
    assert index.partitions == 3
    assert ledger.evictions() == {("semantic", "capacity"): 2}
    await index.close()
    database = tmp_path / "semantic-test-8d.sqlite3"
    assert rows(database, "SELECT COUNT(*) FROM semantic_entries") == 3


async def test_index_eviction_inside_one_partition_keeps_the_others_searchable(
    tmp_path: Path,
) -> None:
    index = await EmbeddedVectorIndex.open(
        tmp_path, "test-8d", clock=Clock(), limits=StoreLimits(max_entries=5)
    )
    for seed in range(40):
        await index.add(semantic_entry(f"e{seed}"), vector_for(seed))
    assert await index.count() == 5
    for seed in range(35, 40):
        best = await index.search("fp", vector_for(seed), 1)
        assert best[0][0].entry_id == f"e{seed}"
        assert best[0][1] == pytest.approx(1.0, abs=1e-5)
    await index.close()


async def test_index_per_tenant_cap_protects_other_tenants(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    limits = StoreLimits(max_entries=20, max_entries_per_tenant=4)
    index = await EmbeddedVectorIndex.open(
        tmp_path, "test-8d", clock=Clock(), limits=limits, ledger=ledger
    )
    await index.add(semantic_entry("quiet", tenant="quiet", fingerprint="q"), vector_for(1))
    for seed in range(50):
        await index.add(
            semantic_entry(f"f{seed}", tenant="flood", fingerprint=f"f{seed}"), vector_for(seed)
        )
    assert [hit.entry_id for hit, _ in await index.search("q", vector_for(1), 1)] == ["quiet"]
    assert await index.count() == 5
    assert ledger.evictions() == {("semantic", "tenant_capacity"): 46}
    await index.close()


async def test_index_byte_cap_and_reopen_with_a_lower_cap(tmp_path: Path) -> None:
    index = await EmbeddedVectorIndex.open(tmp_path, "test-8d", clock=Clock())
    for seed in range(10):
        entry = replace(semantic_entry(f"e{seed}", fingerprint=f"fp{seed}"), query_text="q" * 300)
        await index.add(entry, vector_for(seed))
    await index.close()
    ledger = CapacityLedger()
    reopened = await EmbeddedVectorIndex.open(
        tmp_path, "test-8d", clock=Clock(), limits=StoreLimits(max_bytes=1024), ledger=ledger
    )
    usage = ledger.usage()["semantic"]
    assert usage.bytes <= 1024
    assert 0 < usage.entries < 10
    assert await reopened.count() == usage.entries
    await reopened.close()


async def test_the_sweep_drops_expired_vectors_from_memory_and_disk(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    clock = Clock()
    index = await EmbeddedVectorIndex.open(tmp_path, "test-8d", clock=clock, ledger=ledger)
    for seed in range(30):
        entry = semantic_entry(f"e{seed}", fingerprint=f"ns{seed}", ttl=10)
        await index.add(entry, vector_for(seed))
    await index.add(semantic_entry("long", fingerprint="kept", ttl=10_000), vector_for(99))
    clock.now += 20
    assert await index.sweep_expired() == 30
    assert index.partitions == 1
    assert ledger.usage()["semantic"].entries == 1
    assert ledger.evictions() == {("semantic", "expired"): 30}
    await index.close()
    assert rows(tmp_path / "semantic-test-8d.sqlite3", "SELECT COUNT(*) FROM semantic_entries") == 1


# --- sessions ----------------------------------------------------------------------------


def session_items(text: str) -> list[SessionItem]:
    return [
        SessionItem(
            key=text, content=text, score=0.9, memory_id="m", created_at=1.0, admitted_at=1.0
        )
    ]


async def test_sessions_are_capped_per_tenant_and_globally(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    limits = StoreLimits(max_entries=6, max_entries_per_tenant=3)
    _, sessions, database = await open_embedded_memory(tmp_path, limits, ledger)
    for index in range(10):
        await sessions.save("flood", "u", f"s{index}", session_items(f"f{index}"), 600)
    for index in range(2):
        await sessions.save("quiet", "u", f"s{index}", session_items(f"q{index}"), 600)
    assert [await sessions.load("flood", "u", f"s{index}") != [] for index in range(10)] == [
        False
    ] * 7 + [True] * 3
    assert await sessions.load("quiet", "u", "s0") == session_items("q0")
    assert ledger.usage()["sessions"].entries == 5
    assert ledger.evictions() == {("sessions", "tenant_capacity"): 7}
    await database.close()


async def test_expired_sessions_are_swept(tmp_path: Path) -> None:
    ledger = CapacityLedger()
    _, sessions, database = await open_embedded_memory(tmp_path, StoreLimits(), ledger)
    for index in range(5):
        await sessions.save("acme", "u", f"s{index}", session_items("x"), 1)
    await asyncio.sleep(1.1)
    assert await sessions.sweep_expired() == 5
    assert ledger.usage()["sessions"].entries == 0
    await database.close()
    assert rows(tmp_path / "memory.sqlite3", "SELECT COUNT(*) FROM sessions") == 0


# --- namespaces, the sweeper, settings ----------------------------------------------------


def test_namespace_cap_per_tenant_and_idle_namespaces_stop_counting() -> None:
    now = [0.0]
    limiter = NamespaceLimiter(max_per_tenant=2, idle_seconds=100, clock=lambda: now[0])
    assert limiter.admit("acme", "a")
    assert limiter.admit("acme", "b")
    assert not limiter.admit("acme", "c")
    assert limiter.admit("acme", "a")  # a known namespace stays usable
    assert limiter.admit("acme", None)  # the default namespace always is
    assert limiter.admit("globex", "c")  # caps are per tenant
    now[0] = 150.0
    limiter.admit("acme", "a")
    now[0] = 210.0  # "b" idle for 210 s, "a" for 60 s
    assert limiter.admit("acme", "c")
    assert not limiter.admit("acme", "d")
    assert limiter.refused_total == 2


async def test_the_sweeper_runs_until_stopped_and_survives_a_failing_sweep() -> None:
    calls: list[int] = []
    done = asyncio.Event()

    async def sweep() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise sqlite3.OperationalError("disk I/O error")
        if len(calls) == 3:
            done.set()
        return 0

    task = start_sweeper(sweep, interval_seconds=0.01)
    await asyncio.wait_for(done.wait(), timeout=10)
    await stop_sweeper(task)
    assert task.cancelled()
    stopped_at = len(calls)
    await asyncio.sleep(0.05)
    assert len(calls) == stopped_at


def test_capacity_settings_are_validated() -> None:
    config, _ = parse_config(
        {"capacity": {"exact_cache": {"max_entries": 500, "max_entries_per_tenant": 100}}}
    )
    assert config.capacity.exact_cache.max_entries_per_tenant == 100
    assert config.capacity.semantic_index.max_entries == 100_000
    with pytest.raises(ConfigError, match="max_entries_per_tenant"):
        parse_config({"capacity": {"exact_cache": {"max_entries": 5, "max_entries_per_tenant": 9}}})
    with pytest.raises(ConfigError, match="capacity"):
        parse_config({"capacity": {"exact_cache": {"max_entries": 0}}})
    with pytest.raises(ConfigError, match="capacity"):
        parse_config({"capacity": {"sweep_interval_seconds": 0}})


def test_capacity_snapshot_lists_every_store() -> None:
    ledger = CapacityLedger()
    ledger.set_usage("exact", 3, 300)
    ledger.evicted("exact", EvictionReason.CAPACITY, 2)
    snapshot = capacity_snapshot(ledger, CapacitySettings())
    assert snapshot["stores"]["exact"]["entries"] == 3
    assert snapshot["stores"]["exact"]["evictions"]["capacity"] == 2
    assert snapshot["stores"]["semantic"]["entries"] is None
    assert snapshot["stores"]["sessions"]["limits"]["max_entries"] == 100_000


async def test_hits_served_from_memory_count_for_eviction_before_they_reach_the_database(
    tmp_path: Path,
) -> None:
    cache = await full_cache_of_three(tmp_path, CapacityLedger())
    for key in ("a", "b", "c", "a"):  # the first read of each from the database
        assert await cache.get(key) is not None
    # "a" again: served from memory, its stamp waits on the loop; "b" is now the least
    # recently used, and the eviction below must know it.
    assert await cache.get("a") is not None
    await cache.put("d", completion("d"), ttl_seconds=60)
    held = [key for key in "abcd" if await cache.get(key) is not None]
    assert held == ["a", "c", "d"]
    await cache.close()


async def test_stamps_of_hits_served_from_memory_are_written_in_time_not_every_64_keys(
    tmp_path: Path,
) -> None:
    clock = Clock()
    cache = await open_exact(tmp_path, StoreLimits(), CapacityLedger(), clock)
    keys = [f"k{index}" for index in range(100)]
    for key in keys:
        await cache.put(key, completion(key), ttl_seconds=600)
        assert await cache.get(key) is not None  # from the database, then kept in memory
    reads_done_ms = int(clock.now * 1000)
    for _ in range(3):
        for key in keys:
            assert await cache.get(key) is not None  # from memory
    await asyncio.sleep(0.05)
    latest = "SELECT CAST(MAX(last_used_at) * 1000 AS INTEGER) FROM exact_cache"
    database = tmp_path / "gateway.sqlite3"
    # 300 hits from memory over 100 keys wrote no stamp yet (a commit every 64 keys did).
    assert rows(database, latest) <= reads_done_ms
    served_ms = int(clock.now * 1000)
    clock.now += 11.0  # past the longest a stamp waits
    assert await cache.get("k0") is not None
    for _ in range(200):
        if rows(database, latest) >= served_ms:
            break
        await asyncio.sleep(0.01)
    assert rows(database, latest) >= served_ms
    await cache.close()
