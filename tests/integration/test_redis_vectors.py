"""RedisVectorIndex against a real server with RediSearch."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from gateway.cache.vector_index_settings import VectorIndexSettings
from gateway.storage.index_name import index_name_for
from gateway.storage.protocols import SemanticEntry, StoreUnavailable
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.vectors import RedisVectorIndex
from gateway.testing.redis_server import RedisServer

DIMS = 4


def _entry(
    entry_id: str, fingerprint: str = "fp1", ttl: float = 60.0, **fields: str
) -> SemanticEntry:
    now = time.time()
    return SemanticEntry(
        entry_id=entry_id,
        tenant=fields.get("tenant", "acme"),
        model="m1",
        fingerprint=fingerprint,
        query_text=f"question {entry_id}",
        completion={"choices": [{"message": {"content": f"answer {entry_id} é"}}]},
        created_at=now,
        expires_at=now + ttl,
        policy_version=fields.get("policy_version", ""),
    )


def _vec(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


async def _open(
    connection: RedisConnection, prefix: str, name: str = "test-model", dims: int = DIMS
) -> RedisVectorIndex:
    return await RedisVectorIndex.open(connection, index_name_for(name, dims), dims, prefix=prefix)


async def test_search_is_best_first_top_k_and_partitioned(
    connection: RedisConnection, prefix: str
) -> None:
    index = await _open(connection, prefix)
    await index.add(_entry("same", policy_version="v7"), _vec(1, 0, 0, 0))
    await index.add(_entry("near"), _vec(1, 0.2, 0, 0))
    await index.add(_entry("far"), _vec(0, 1, 0, 0))
    # Identical vector, other fingerprint: must never come back for fp1.
    await index.add(_entry("other-fp", fingerprint="fp2"), _vec(1, 0, 0, 0))

    hits = await index.search("fp1", _vec(1, 0, 0, 0), top_k=2)
    assert [entry.entry_id for entry, _ in hits] == ["same", "near"]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert hits[1][1] == pytest.approx(1 / np.sqrt(1.04), abs=1e-5)
    first = hits[0][0]
    assert first.policy_version == "v7"
    assert first.completion == {"choices": [{"message": {"content": "answer same é"}}]}
    assert (first.tenant, first.model, first.fingerprint) == ("acme", "m1", "fp1")
    assert first.query_text == "question same"

    all_hits = await index.search("fp1", _vec(1, 0, 0, 0), top_k=10)
    assert [entry.entry_id for entry, _ in all_hits] == ["same", "near", "far"]
    assert all_hits[2][1] == pytest.approx(0.0, abs=1e-5)
    assert [e.entry_id for e, _ in await index.search("fp2", _vec(1, 0, 0, 0), 5)] == ["other-fp"]
    assert await index.search("nothing-here", _vec(1, 0, 0, 0), 5) == []
    assert await index.search("fp1", _vec(1, 0, 0, 0), 0) == []
    assert await index.count() == 4


async def test_tag_syntax_in_a_fingerprint_is_escaped(
    connection: RedisConnection, prefix: str
) -> None:
    index = await _open(connection, prefix)
    odd = "fp-1 {x}|y@z:é"
    await index.add(_entry("odd", fingerprint=odd), _vec(1, 0, 0, 0))
    await index.add(_entry("plain", fingerprint="fp-1"), _vec(1, 0, 0, 0))
    assert [e.entry_id for e, _ in await index.search(odd, _vec(1, 0, 0, 0), 5)] == ["odd"]
    assert [e.entry_id for e, _ in await index.search("fp-1", _vec(1, 0, 0, 0), 5)] == ["plain"]
    assert await index.search("fp-1 {x}", _vec(1, 0, 0, 0), 5) == []


async def test_search_reads_resp3_replies_too(redis_server: RedisServer, prefix: str) -> None:
    # A redis_url may ask for RESP3 (`?protocol=3`): FT.SEARCH then answers a map.
    connection = RedisConnection(f"{redis_server.url}?protocol=3")
    try:
        index = await _open(connection, prefix)
        await index.add(_entry("same"), _vec(1, 0, 0, 0))
        await index.add(_entry("near"), _vec(1, 0.2, 0, 0))
        hits = await index.search("fp1", _vec(1, 0, 0, 0), top_k=5)
        assert [entry.entry_id for entry, _ in hits] == ["same", "near"]
        assert hits[0][0].completion == {"choices": [{"message": {"content": "answer same é"}}]}
        assert hits[1][1] == pytest.approx(1 / np.sqrt(1.04), abs=1e-5)
    finally:
        await connection.close()


async def test_re_adding_an_id_replaces_it(connection: RedisConnection, prefix: str) -> None:
    index = await _open(connection, prefix)
    await index.add(_entry("a"), _vec(1, 0, 0, 0))
    await index.add(_entry("a"), _vec(0, 1, 0, 0))
    hits = await index.search("fp1", _vec(0, 1, 0, 0), 5)
    assert [(e.entry_id, round(c, 4)) for e, c in hits] == [("a", 1.0)]


async def test_wrong_dimensions_and_zero_vectors_are_rejected(
    connection: RedisConnection, prefix: str
) -> None:
    index = await _open(connection, prefix)
    with pytest.raises(ValueError, match="dimensions"):
        await index.add(_entry("a"), _vec(1, 0, 0))
    with pytest.raises(ValueError, match="dimensions"):
        await index.search("fp1", _vec(1, 0, 0, 0, 0), 3)
    with pytest.raises(ValueError, match="non-zero"):
        await index.add(_entry("a"), _vec(0, 0, 0, 0))


async def test_entries_expire(connection: RedisConnection, prefix: str) -> None:
    index = await _open(connection, prefix)
    await index.add(_entry("short", ttl=1.0), _vec(1, 0, 0, 0))
    await index.add(_entry("long"), _vec(0.9, 0.1, 0, 0))
    await index.add(_entry("already-expired", ttl=-1.0), _vec(1, 0, 0, 0))
    ttl_ms = await connection.client.pttl(index.key_for("short"))
    assert 0 < ttl_ms <= 1000
    assert [e.entry_id for e, _ in await index.search("fp1", _vec(1, 0, 0, 0), 5)] == [
        "short",
        "long",
    ]
    await asyncio.sleep(1.1)
    assert [e.entry_id for e, _ in await index.search("fp1", _vec(1, 0, 0, 0), 5)] == ["long"]
    assert await index.count() == 1


async def test_expired_by_our_clock_is_skipped_before_redis_evicts(
    connection: RedisConnection, prefix: str
) -> None:
    """The query filters on expires_at too: an entry past it never comes back, even
    while the key still lives (clock skew, lazy eviction)."""
    offset = [0.0]
    name = index_name_for("clock-model", DIMS)
    index = await RedisVectorIndex.open(
        connection, name, DIMS, prefix=prefix, clock=lambda: time.time() + offset[0]
    )
    await index.add(_entry("a", ttl=30.0), _vec(1, 0, 0, 0))
    assert len(await index.search("fp1", _vec(1, 0, 0, 0), 5)) == 1
    offset[0] = 60.0
    assert await index.search("fp1", _vec(1, 0, 0, 0), 5) == []
    assert await index.count() == 0


async def test_index_per_embedder_and_dimensions(connection: RedisConnection, prefix: str) -> None:
    a = await _open(connection, prefix, "model-a", 4)
    b = await _open(connection, prefix, "model-b", 4)
    a8 = await _open(connection, prefix, "model-a", 8)
    assert len({a.name, b.name, a8.name}) == 3
    assert a.name == f"{prefix}-semantic-model-a-4d"
    assert a.key_prefix == f"{prefix}:semantic:model-a-4d"
    await a.add(_entry("from-a"), _vec(1, 0, 0, 0))
    await a8.add(_entry("from-a8"), np.ones(8, dtype=np.float32))
    assert await b.search("fp1", _vec(1, 0, 0, 0), 5) == []
    assert [e.entry_id for e, _ in await a.search("fp1", _vec(1, 0, 0, 0), 5)] == ["from-a"]
    assert [e.entry_id for e, _ in await a8.search("fp1", np.ones(8), 5)] == ["from-a8"]
    listed = {
        name.decode() if isinstance(name, bytes) else name
        for name in await connection.client.execute_command("FT._LIST")
    }
    assert {a.name, b.name, a8.name} <= listed


async def test_opening_an_existing_index_keeps_its_entries(
    connection: RedisConnection, prefix: str
) -> None:
    first = await _open(connection, prefix)
    await first.add(_entry("kept"), _vec(1, 0, 0, 0))
    second = await _open(connection, prefix)  # e.g. another replica, or a restart
    await second.ensure_index()
    assert await second.count() == 1
    assert [e.entry_id for e, _ in await second.search("fp1", _vec(1, 0, 0, 0), 3)] == ["kept"]


async def test_dropped_index_is_recreated(connection: RedisConnection, prefix: str) -> None:
    index = await _open(connection, prefix)
    await index.add(_entry("a"), _vec(1, 0, 0, 0))
    await connection.client.execute_command("FT.DROPINDEX", index.name, "DD")
    assert await index.search("fp1", _vec(1, 0, 0, 0), 3) == []  # recreated, empty
    await index.add(_entry("b"), _vec(1, 0, 0, 0))
    assert [e.entry_id for e, _ in await index.search("fp1", _vec(1, 0, 0, 0), 3)] == ["b"]


async def test_backend_bundles_the_stores(redis_server: RedisServer, prefix: str) -> None:
    name = index_name_for("bundle-model", DIMS)
    backend = await RedisBackend.open(redis_server.url, prefix=prefix, index_name=name)
    try:
        assert backend.semantic.dimensions == DIMS
        assert backend.semantic.name == f"{prefix}-semantic-{name}"
        assert backend.key("memory", "acme", "u:1") == f"{prefix}:memory:acme:u%3A1"
        assert backend.key("a:b", "c") != backend.key("a", "b:c")
        other = await backend.vectors(index_name_for("other-model", 8))
        assert other.dimensions == 8
        token = await backend.lock.acquire("k", 5)
        assert token is not None
        assert await backend.lock.release("k", token)
        assert await backend.ping()
        assert backend.state() == {
            "backend": "redis",
            "available": True,
            "failures_total": 0,
            "last_error": None,
        }
    finally:
        await backend.close()
    with pytest.raises(ValueError, match="dimensions"):
        await RedisBackend.open(redis_server.url, prefix=prefix, index_name="no-suffix")


async def test_a_count_that_times_out_fails_alone(prefix: str) -> None:
    # A partition count may outlast the operation timeout (a million entries, a busy
    # server): it must not open the fail-open circuit or drop the hot path's socket.
    server = RedisServer().start()  # its own server: this test freezes it
    connection = RedisConnection(server.url)
    try:
        index = await _open(connection, prefix)
        index.count_timeout_ms = 60_000  # the client's 0.25 s timeout is what fails here
        await index.add(_entry("a"), _vec(1, 0, 0, 0))
        await index.add(_entry("b"), _vec(0, 1, 0, 0))
        assert await index.count_partition("fp1") == 2
        server.freeze()
        started = time.perf_counter()
        with pytest.raises(Exception):  # noqa: B017 - redis-py's timeout, whatever its class
            await index.count_partition("fp1")
        assert time.perf_counter() - started < 5.0  # the 0.25 s timeout; a hang never ends
        server.thaw()
        assert connection.available and connection.failures_total == 0
        assert [e.entry_id for e, _ in await index.search("fp1", _vec(1, 0, 0, 0), 1)] == ["a"]
    finally:
        server.thaw()
        await connection.close()
        server.stop()


async def _tag_only_rows(connection: RedisConnection, index: RedisVectorIndex, rows: int) -> None:
    """Hashes that the index counts by their fingerprint tag (no vector: quick to
    load, and the count reads only the tag)."""
    client = connection.client
    for first in range(0, rows, 5_000):
        async with client.pipeline(transaction=False) as pipe:
            for row in range(first, min(first + 5_000, rows)):
                pipe.hset(index.key_for(f"big{row}"), mapping={"fingerprint": "big"})
            await pipe.execute()


async def test_a_partition_too_large_to_count_in_time_is_counted_above_the_limit(
    connection: RedisConnection, prefix: str
) -> None:
    # Counting holds Redis's main thread; RediSearch stops it at the count's TIMEOUT
    # and answers what it had counted. 200,000 entries take Redis ~6-18 ms to count
    # here: with 1 ms the answer is partial, and still above the exact-scan limit.
    index = await RedisVectorIndex.open(
        connection,
        index_name_for("count-model", DIMS),
        DIMS,
        prefix=prefix,
        settings=VectorIndexSettings(exact_scan_max_entries=100),
    )
    await _tag_only_rows(connection, index, 200_000)
    index.count_timeout_ms = 1
    counted = await index.count_partition("big")
    assert 100 < counted < 200_000
    index.count_timeout_ms = 60_000
    assert await index.count_partition("big") == 200_000
    # The search chooses the graph for it, as it would with the full count.
    await index.search("big", _vec(1, 0, 0, 0), 1)
    await index.partition_counts_settled()
    assert index._scans_exactly("big") is False


async def test_a_slow_count_within_the_limit_is_not_trusted(prefix: str) -> None:
    # A count that took its whole timeout may have been cut short; within the limit
    # that could make a large partition look small (an exact scan of all of it), so it
    # fails instead and RediSearch keeps choosing until a count comes back in time.
    server = RedisServer().start()  # its own server: this test freezes it
    connection = RedisConnection(server.url, operation_timeout_seconds=30.0)
    try:
        index = await _open(connection, prefix)
        await index.add(_entry("a"), _vec(1, 0, 0, 0))
        index.count_timeout_ms = 50
        server.freeze()
        count = asyncio.ensure_future(index.count_partition("fp1"))
        await asyncio.sleep(0.1)
        server.thaw()
        with pytest.raises(StoreUnavailable, match="may be partial"):
            await count
        index.count_timeout_ms = 60_000
        assert await index.count_partition("fp1") == 1
    finally:
        server.thaw()
        await connection.close()
        server.stop()
