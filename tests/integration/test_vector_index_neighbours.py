"""Both semantic indexes return the true nearest neighbours (graded against numpy brute
force), and the Redis index is built with the HNSW parameters of `storage.vector_index`."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from gateway.cache.vector_index_settings import VectorIndexSettings
from gateway.storage.embedded.vectors import EmbeddedVectorIndex
from gateway.storage.index_name import index_name_for
from gateway.storage.protocols import SemanticEntry, VectorIndex
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.vectors import RedisVectorIndex

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
    connection: RedisConnection, prefix: str
) -> None:
    index = await RedisVectorIndex.open(connection, index_name_for("nn", DIMS), DIMS, prefix=prefix)
    await _assert_true_neighbours(index)


async def test_redis_index_is_built_with_the_configured_hnsw_parameters(
    connection: RedisConnection, prefix: str
) -> None:
    settings = VectorIndexSettings(hnsw_m=8, hnsw_ef_construction=64, hnsw_ef_runtime=50)
    index = await RedisVectorIndex.open(
        connection, index_name_for("nn", DIMS), DIMS, prefix=prefix, settings=settings
    )
    info = await connection.client.execute_command("FT.INFO", index.name)  # type: ignore[no-untyped-call]
    text = repr(info).lower()
    # FT.INFO lists the vector field's attributes: algorithm, M, EF_CONSTRUCTION...
    flat = [
        str(part.decode() if isinstance(part, bytes) else part).lower() for part in _flatten(info)
    ]
    assert flat[flat.index("m") + 1] == "8", text
    assert flat[flat.index("ef_construction") + 1] == "64", text
    await _assert_true_neighbours(index)


def _flatten(reply: object) -> list[object]:
    if isinstance(reply, (list, tuple)):
        return [item for part in reply for item in _flatten(part)]
    if isinstance(reply, dict):
        return [item for pair in reply.items() for item in _flatten(list(pair))]
    return [reply]
