"""Both semantic indexes return the true nearest neighbours (graded against numpy brute
force), and the Redis index is built with the HNSW parameters of `storage.vector_index`."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from gateway.cache.limits import StoreLimits
from gateway.cache.vector_index_settings import VectorIndexSettings
from gateway.storage.embedded.vectors import EmbeddedVectorIndex
from gateway.storage.index_name import index_name_for
from gateway.storage.protocols import SemanticEntry, VectorIndex
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.vectors import RedisVectorIndex
from gateway.testing.redis_server import RedisServer

DIMS = 32
ENTRIES = 300
QUERIES = 20
TOP_K = 5


def _entry(row: int, fingerprint: str) -> SemanticEntry:
    now = time.time()
    return SemanticEntry(
        entry_id=f"e{row:04d}",
        tenant="acme",
        model="m1",
        fingerprint=fingerprint,
        query_text=f"question {row}",
        completion={"row": row},
        created_at=now,
        expires_at=now + 600,
    )


def _clustered(rng: np.random.Generator, rows: int) -> np.ndarray:
    """Topics of similar vectors, as a cache sees them (not uniform noise)."""
    centroids = rng.standard_normal((10, DIMS)).astype(np.float32)
    picks = centroids[rng.integers(0, 10, rows)]
    vectors = picks + 0.6 * rng.standard_normal((rows, DIMS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
async def patient(redis_server: RedisServer) -> AsyncIterator[RedisConnection]:
    """A connection that waits out a busy shared test machine: these tests grade
    results, not latency."""
    conn = RedisConnection(redis_server.url, operation_timeout_seconds=10.0)
    yield conn
    await conn.close()


async def _assert_true_neighbours(index: VectorIndex) -> None:
    rng = np.random.default_rng(11)
    vectors = _clustered(rng, ENTRIES)
    for row in range(ENTRIES):
        await index.add(_entry(row, "fp"), vectors[row])
        # Same vector in another fingerprint: must never be returned for "fp".
        await index.add(_entry(ENTRIES + row, "other"), vectors[row])
    queries = _clustered(rng, QUERIES)
    scores = queries @ vectors.T
    for query, row_scores in zip(queries, scores, strict=True):
        expected = [f"e{row:04d}" for row in np.argsort(-row_scores)[:TOP_K]]
        hits = await index.search("fp", query, TOP_K)
        assert [entry.entry_id for entry, _ in hits] == expected
        assert [score for _, score in hits] == pytest.approx(
            sorted(row_scores, reverse=True)[:TOP_K], abs=1e-4
        )


async def test_embedded_index_returns_the_exact_nearest_neighbours(tmp_path: Path) -> None:
    index = await EmbeddedVectorIndex.open(tmp_path, index_name_for("nn", DIMS))
    try:
        await _assert_true_neighbours(index)
    finally:
        await index.close()


async def test_redis_index_returns_the_true_nearest_neighbours(
    patient: RedisConnection, prefix: str
) -> None:
    index = await RedisVectorIndex.open(patient, index_name_for("nn", DIMS), DIMS, prefix=prefix)
    await _assert_true_neighbours(index)


async def test_redis_index_is_built_with_the_configured_hnsw_parameters(
    patient: RedisConnection, prefix: str
) -> None:
    settings = VectorIndexSettings(hnsw_m=8, hnsw_ef_construction=64, hnsw_ef_runtime=50)
    index = await RedisVectorIndex.open(
        patient, index_name_for("nn", DIMS), DIMS, prefix=prefix, settings=settings
    )
    info = await patient.client.execute_command("FT.INFO", index.name)  # type: ignore[no-untyped-call]
    text = repr(info).lower()
    # FT.INFO lists the vector field's attributes: algorithm, M, EF_CONSTRUCTION...
    flat = [
        str(part.decode() if isinstance(part, bytes) else part).lower() for part in _flatten(info)
    ]
    assert flat[flat.index("m") + 1] == "8", text
    assert flat[flat.index("ef_construction") + 1] == "64", text
    await _assert_true_neighbours(index)


async def test_a_small_partition_is_scanned_exactly_where_the_graph_misses(
    patient: RedisConnection, prefix: str
) -> None:
    # A deliberately poor graph (few edges, short candidate lists) over uniform vectors,
    # the hardest case for HNSW: searched through the graph it misses true neighbours;
    # a partition within `exact_scan_max_entries` is scanned and misses none. (Below
    # about 10,000 entries RediSearch scans a filtered KNN by itself.)
    rng = np.random.default_rng(5)
    rows = 12_000
    vectors = rng.standard_normal((rows, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    poor = {"hnsw_m": 4, "hnsw_ef_construction": 10, "hnsw_ef_runtime": 10}
    graph = await RedisVectorIndex.open(
        patient,
        index_name_for("nn", DIMS),
        DIMS,
        prefix=prefix,
        settings=VectorIndexSettings(**poor, exact_scan_max_entries=0),
    )
    # Concurrent adds within the connection's 64 slots (a wait for a slot fails fast).
    for first in range(0, rows, 48):
        batch = range(first, min(first + 48, rows))
        await asyncio.gather(*(graph.add(_entry(row, "fp"), vectors[row]) for row in batch))
    exact = await RedisVectorIndex.open(
        patient,
        index_name_for("nn", DIMS),
        DIMS,
        prefix=prefix,
        settings=VectorIndexSettings(**poor, exact_scan_max_entries=rows),
    )
    exact.count_timeout_ms = 60_000  # a loaded machine may not count 12,000 in 50 ms
    queries = rng.standard_normal((40, DIMS)).astype(np.float32)
    # A partition is counted behind its first search; the searches after it scan.
    await exact.search("fp", queries[0], TOP_K)
    await exact.partition_counts_settled()
    graph_found = exact_found = 0
    for query in queries:
        truth = {f"e{row:04d}" for row in np.argsort(-(vectors @ query))[:TOP_K]}
        graph_found += len(truth & {e.entry_id for e, _ in await graph.search("fp", query, TOP_K)})
        exact_found += len(truth & {e.entry_id for e, _ in await exact.search("fp", query, TOP_K)})
    assert exact_found == len(queries) * TOP_K
    assert graph_found < exact_found  # the graph alone would have missed some
    await graph.close()
    await exact.close()


def _flatten(reply: object) -> list[object]:
    if isinstance(reply, (list, tuple)):
        return [item for part in reply for item in _flatten(part)]
    if isinstance(reply, dict):
        return [item for pair in reply.items() for item in _flatten(list(pair))]
    return [reply]


async def test_embedded_index_keeps_a_tenant_within_exact_search_whatever_the_caps(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Caps that allow 50 entries per tenant, an exact-search ceiling of 5: the ceiling
    # wins, the oldest of the tenant go, other tenants keep their own room, and the
    # operator is told at start why and what to use instead.
    with caplog.at_level("WARNING", logger="gateway.storage.embedded.vectors"):
        index = await EmbeddedVectorIndex.open(
            tmp_path,
            index_name_for("nn", DIMS),
            limits=StoreLimits(max_entries=50),
            max_tenant_entries=5,
        )
    assert "keeps at most 5 per tenant" in caplog.text
    assert "storage.backend redis" in caplog.text
    try:
        vectors = _clustered(np.random.default_rng(3), 10)
        for row in range(8):
            await index.add(_entry(row, "fp"), vectors[row])
        other = dataclasses.replace(_entry(9, "fp"), tenant="globex")
        await index.add(other, vectors[9])
        assert await index.count() == 6
        # The three oldest of acme were evicted; its five newest remain searchable.
        hits = await index.search("fp", vectors[0], top_k=10)
        assert sorted(entry.entry_id for entry, _ in hits) == [
            "e0003", "e0004", "e0005", "e0006", "e0007", "e0009"
        ]  # fmt: skip
    finally:
        await index.close()


async def test_embedded_caps_within_the_ceiling_are_left_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="gateway.storage.embedded.vectors"):
        index = await EmbeddedVectorIndex.open(
            tmp_path, index_name_for("nn", DIMS), limits=StoreLimits(max_entries=5)
        )
    assert caplog.text == ""
    await index.close()
