from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gateway.storage.embedded.vectors import EmbeddedVectorIndex
from gateway.storage.index_name import index_name_for
from gateway.storage.protocols import SemanticEntry, VectorIndex

DIM = 8


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def entry(entry_id: str, fingerprint: str = "fp", ttl: float = 60.0) -> SemanticEntry:
    return SemanticEntry(
        entry_id=entry_id,
        tenant="acme",
        model="m",
        fingerprint=fingerprint,
        query_text=f"query {entry_id}",
        completion={"choices": [{"message": {"content": entry_id}}]},
        created_at=1000.0,
        expires_at=1000.0 + ttl,
    )


def unit(*values: float) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


async def open_index(tmp_path: Path, clock: Clock) -> EmbeddedVectorIndex:
    return await EmbeddedVectorIndex.open(tmp_path, "test-8d", clock=clock)


async def test_add_and_search_top_k_in_order(tmp_path: Path) -> None:
    index: VectorIndex = await open_index(tmp_path, Clock())
    await index.add(entry("a"), unit(1, 0))
    await index.add(entry("b"), unit(1, 1))
    await index.add(entry("c"), unit(0, 1))
    await index.add(entry("d"), unit(-1, 0))
    hits = await index.search("fp", unit(1, 0.2), top_k=3)
    assert [e.entry_id for e, _ in hits] == ["a", "b", "c"]
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] == pytest.approx(float(unit(1, 0.2) @ unit(1, 0)), abs=1e-6)
    assert hits[0][0] == entry("a")  # the whole entry comes back, completion included
    assert [e.entry_id for e, _ in await index.search("fp", unit(1, 0), top_k=10)] == [
        "a",
        "b",
        "c",
        "d",
    ]
    assert await index.search("fp", unit(1, 0), top_k=0) == []
    assert await index.count() == 4
    assert await index.ping()
    await index.close()
    assert not await index.ping()


async def test_partitions_are_isolated(tmp_path: Path) -> None:
    index = await open_index(tmp_path, Clock())
    await index.add(entry("a", fingerprint="fp1"), unit(1, 0))
    await index.add(entry("b", fingerprint="fp2"), unit(1, 0))
    assert [e.entry_id for e, _ in await index.search("fp1", unit(1, 0), 5)] == ["a"]
    assert [e.entry_id for e, _ in await index.search("fp2", unit(1, 0), 5)] == ["b"]
    assert await index.search("fp3", unit(1, 0), 5) == []
    await index.close()


async def test_expired_entries_are_skipped_and_swept(tmp_path: Path) -> None:
    clock = Clock()
    index = await open_index(tmp_path, clock)
    await index.add(entry("short", ttl=10), unit(1, 0))
    await index.add(entry("long", ttl=100), unit(0.5, 1))
    clock.now += 11
    hits = await index.search("fp", unit(1, 0), 5)
    assert [e.entry_id for e, _ in hits] == ["long"]
    assert await index.count() == 1
    assert await index.sweep_expired() == 1
    clock.now += 100
    assert await index.search("fp", unit(1, 0), 5) == []
    assert await index.count() == 0
    await index.close()


async def test_persists_across_reopen_and_sweeps_on_open(tmp_path: Path) -> None:
    clock = Clock()
    index = await open_index(tmp_path, clock)
    await index.add(entry("keep", ttl=100), unit(1, 0))
    await index.add(entry("other", fingerprint="fp2", ttl=100), unit(0, 1))
    await index.add(entry("expire", ttl=10), unit(1, 0.1))
    await index.close()

    clock.now += 50
    reopened = await open_index(tmp_path, clock)
    assert reopened.dimensions == DIM
    assert await reopened.count() == 2
    hits = await reopened.search("fp", unit(1, 0), 5)
    assert [(e, round(s, 5)) for e, s in hits] == [(entry("keep", ttl=100), 1.0)]
    assert [e.entry_id for e, _ in await reopened.search("fp2", unit(0, 1), 5)] == ["other"]
    # The expired row is gone from disk, not just hidden.
    assert await reopened.sweep_expired() == 0
    await reopened.close()


async def test_readding_an_id_replaces_it_even_across_fingerprints(tmp_path: Path) -> None:
    clock = Clock()
    index = await open_index(tmp_path, clock)
    await index.add(entry("x"), unit(1, 0))
    await index.add(entry("x"), unit(0, 1))
    assert [e.entry_id for e, _ in await index.search("fp", unit(0, 1), 5)] == ["x"]
    assert (await index.search("fp", unit(0, 1), 5))[0][1] == pytest.approx(1.0)
    await index.add(entry("x", fingerprint="fp2"), unit(0, 1))
    assert await index.search("fp", unit(0, 1), 5) == []
    assert [e.entry_id for e, _ in await index.search("fp2", unit(0, 1), 5)] == ["x"]
    assert await index.count() == 1
    await index.sweep_expired()
    assert await index.count() == 1
    await index.close()
    reopened = await open_index(tmp_path, clock)
    assert await reopened.count() == 1
    await reopened.close()


async def test_growth_and_compaction_keep_results_exact(tmp_path: Path) -> None:
    clock = Clock()
    index = await open_index(tmp_path, clock)
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((300, DIM)).astype(np.float32)
    for i, vector in enumerate(vectors):
        # Every third entry expires at 1005, so growth past 101 rows compacts on the way.
        await index.add(entry(f"e{i}", ttl=5 if i % 3 == 0 else 500), vector)
        if i == 100:
            clock.now += 10
    query = rng.standard_normal(DIM).astype(np.float32)
    hits = await index.search("fp", query, top_k=5)
    alive = [i for i in range(300) if i % 3 != 0]
    unit_vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = unit_vectors @ (query / np.linalg.norm(query))
    expected = sorted(alive, key=lambda i: -scores[i])[:5]
    assert [e.entry_id for e, _ in hits] == [f"e{i}" for i in expected]
    assert await index.count() == len(alive)
    await index.close()


async def test_unnormalised_input_is_normalised_and_bad_vectors_rejected(tmp_path: Path) -> None:
    index = await open_index(tmp_path, Clock())
    await index.add(entry("a"), np.array([3, 4, 0, 0, 0, 0, 0, 0], dtype=np.float32))
    hits = await index.search("fp", np.array([6, 8, 0, 0, 0, 0, 0, 0], dtype=np.float32), 1)
    assert hits[0][1] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="dimensions"):
        await index.add(entry("b"), np.ones(DIM + 1, dtype=np.float32))
    with pytest.raises(ValueError, match="dimensions"):
        await index.search("fp", np.ones(DIM + 1, dtype=np.float32), 1)
    with pytest.raises(ValueError, match="non-zero"):
        await index.add(entry("c"), np.zeros(DIM, dtype=np.float32))
    await index.close()


async def test_each_index_name_is_its_own_file(tmp_path: Path) -> None:
    clock = Clock()
    first = await EmbeddedVectorIndex.open(tmp_path, index_name_for("model-a", DIM), clock)
    await first.add(entry("a"), unit(1, 0))
    await first.close()
    second = await EmbeddedVectorIndex.open(tmp_path, index_name_for("model-b", DIM), clock)
    assert await second.count() == 0
    await second.close()
    with pytest.raises(ValueError, match="unsafe"):
        await EmbeddedVectorIndex.open(tmp_path, "../escape", clock)


def test_index_name_for_differs_by_model_and_dimensions() -> None:
    assert index_name_for("use-multilingual-v3", 512) == "use-multilingual-v3-512d"
    names = {
        index_name_for("use-multilingual-v3", 512),
        index_name_for("use-multilingual-v3", 256),
        index_name_for("litellm:text-embedding-3-small", 1536),
        index_name_for("litellm:text-embedding-3-large", 1536),
        index_name_for("a/b", 8),
        index_name_for("a:b", 8),
        index_name_for("a-b", 8),
    }
    assert len(names) == 7
    for name in names:
        assert "/" not in name and ":" not in name and not name.startswith(".")
    assert len(index_name_for("x" * 500, 8)) < 100
    with pytest.raises(ValueError):
        index_name_for("m", 0)
