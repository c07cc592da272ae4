"""The shipped in-process fakes keep the contracts of the protocols they stand in for."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.cache.purge import PurgeFilter
from gateway.embed.protocol import Embedder
from gateway.review.protocol import Reviewer
from gateway.storage.protocols import AdaptiveCounterStore, CachedCompletion, ExactCache
from gateway.testing.fakes import (
    MemoryCounterStore,
    MemoryExactCache,
    StaticReviewer,
    TableEmbedder,
)


def _entry(tenant: str = "acme", model: str = "m", namespace: str = "") -> CachedCompletion:
    return CachedCompletion(
        completion={"id": "c"},
        tenant=tenant,
        model=model,
        created_at=0.0,
        namespace={"namespace": namespace},
    )


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_fakes_satisfy_the_protocols() -> None:
    embedder: Embedder = TableEmbedder()
    reviewer: Reviewer = StaticReviewer()
    cache: ExactCache = MemoryExactCache()
    counters: AdaptiveCounterStore = MemoryCounterStore()
    assert (embedder.name, reviewer.name, cache, counters) != ("", "", None, None)


async def test_table_embedder_gives_unit_vectors_from_the_table() -> None:
    embedder = TableEmbedder({"a": [3.0, 4.0], "b": [0.0, 2.0]}, spare_axes=2)
    vectors = await embedder.embed(["a", "b", "a"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 4)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(vectors[0], [0.6, 0.8, 0.0, 0.0], rtol=1e-6)
    assert float(vectors[0] @ vectors[2]) == pytest.approx(1.0)
    assert embedder.embed_calls == 1 and embedder.embedded == ["a", "b", "a"]


async def test_unknown_texts_get_axes_of_their_own_until_the_spares_run_out() -> None:
    embedder = TableEmbedder({"known": [1.0]}, spare_axes=2)
    first, second, again, known = await embedder.embed(["x", "y", "x", "known"])
    assert float(first @ second) == 0.0 and float(first @ known) == 0.0
    assert float(first @ again) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="spare_axes"):
        await embedder.embed(["z"])


async def test_groups_share_an_axis_and_the_key_normalises_texts() -> None:
    embedder = TableEmbedder.from_groups([["Tea?", "tea"], ["coffee"]], key=str.lower)
    tea, tea_again, coffee = await embedder.embed(["TEA?", "tea", "Coffee"])
    assert float(tea @ tea_again) == pytest.approx(1.0)
    assert float(tea @ coffee) == 0.0
    assert embedder.calibrate(0.5, "en") == 0.5
    assert TableEmbedder(calibration=lambda c: c / 2).calibrate(0.5) == 0.25


async def test_static_reviewer_answers_its_verdict_and_records_the_question() -> None:
    reviewer = StaticReviewer(same_meaning=False)
    verdict = await reviewer.review("q", "c", 0.9, stored_answer="a")
    assert (verdict.same_meaning, verdict.score, verdict.reviewer) == (False, 0.0, reviewer.name)
    assert reviewer.calls == [("q", "c", 0.9, "a")]
    failing = StaticReviewer(error=TimeoutError("slow"))
    with pytest.raises(TimeoutError):
        await failing.review("q", "c", 0.9)


async def test_memory_exact_cache_expires_replaces_and_skips_zero_ttl() -> None:
    clock = Clock()
    cache = MemoryExactCache(clock=clock)
    await cache.put("k", _entry(model="first"), ttl_seconds=10)
    await cache.put("k", _entry(model="second"), ttl_seconds=10)
    stored = await cache.get("k")
    assert stored is not None and stored.model == "second"
    clock.now += 9.9
    assert await cache.get("k") is not None
    clock.now += 0.1
    assert await cache.get("k") is None
    await cache.put("z", _entry(), ttl_seconds=0)
    assert await cache.get("z") is None and cache.entries == {}


async def test_memory_exact_cache_purges_by_filter() -> None:
    cache = MemoryExactCache()
    await cache.put("a1", _entry("acme", namespace="docs"), 60)
    await cache.put("a2", _entry("acme"), 60)
    await cache.put("g1", _entry("globex", namespace="docs"), 60)
    assert await cache.purge(PurgeFilter(tenant="acme", namespace="docs")) == 1
    assert sorted(cache.entries) == ["a2", "g1"]
    assert await cache.purge(PurgeFilter(key="g1")) == 1
    assert sorted(cache.entries) == ["a2"]


async def test_memory_exact_cache_failure_switch() -> None:
    cache = MemoryExactCache()
    cache.failure = OSError("disk on fire")
    assert await cache.ping() is False
    with pytest.raises(OSError):
        await cache.get("k")
    with pytest.raises(OSError):
        await cache.put("k", _entry(), 60)
    cache.failure = None
    assert await cache.ping() is True


async def test_unknown_texts_share_the_default_vector_when_one_is_given() -> None:
    embedder = TableEmbedder({"a": [1.0, 0.0]}, default=[0.0, 1.0])
    assert embedder.dimensions == 2
    a, x, y = await embedder.embed(["a", "x", "y"])
    assert float(a @ x) == 0.0 and float(x @ y) == pytest.approx(1.0)


async def test_memory_counter_store_adds_deltas_and_fails_on_demand() -> None:
    store = MemoryCounterStore()
    await store.add({"acme": {"hits": 1.0}})
    await store.add({"acme": {"hits": 2.0, "misses": 1.0}, "globex": {"hits": 1.0}})
    assert await store.load() == {"acme": {"hits": 3.0, "misses": 1.0}, "globex": {"hits": 1.0}}
    assert store.writes == 2
    store.failure = ConnectionError("store down")
    with pytest.raises(ConnectionError):
        await store.load()
