"""Ranking a large scope with its vector product, or all of it, in a worker thread
returns exactly what ranking it in place returns."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from gateway.memory import ranked
from gateway.memory.relevance import ranks_among
from gateway.memory.retrieval import ScopeIndex, ScoredMemory, rank
from gateway.policy.memory import MemoryPolicy
from tests.unit.memory.fakes import random_scope

RANKING = MemoryPolicy().ranking
WORDS = ["heron", "lantern", "kettle", "compass", "anchor", "violin", "marble", "falcon"]


def _scope(count: int, seed: int = 5) -> tuple[ScopeIndex, list[np.ndarray]]:
    # Every fifth text repeats an earlier one: one result per distinct text.
    return random_scope(
        count, seed, 6, lambda rng, i: f"The {rng.choice(WORDS)} is in hall {i % (count // 5 + 1)}."
    )


def _summary(results: list[ScoredMemory]) -> list[tuple[str, float]]:
    return [(r.record.id, r.score) for r in results]


@pytest.mark.parametrize(
    ("product_above", "whole_above"),
    [(10, 50_000), (10, 10)],
    ids=["product-in-thread", "whole-in-thread"],
)
async def test_a_large_scope_ranked_off_the_loop_ranks_as_in_place(
    monkeypatch: pytest.MonkeyPatch, product_above: int, whole_above: int
) -> None:
    index, queries = _scope(400)
    expected = []
    for query in queries:
        ranking = functools.partial(rank, index, "kettle hall 3", query, 2_000.0, RANKING, 40)
        expected.append(_summary(await ranked.ranked_once_per_text(ranking, index, query, 8)))
    assert all(len(e) == 8 for e in expected)
    # Results are one per distinct text.
    assert all(len({i for i, _ in e}) == 8 for e in expected)
    monkeypatch.setattr(ranked, "PRODUCT_IN_THREAD_ABOVE_RECORDS", product_above)
    monkeypatch.setattr(ranked, "RANK_IN_THREAD_ABOVE_RECORDS", whole_above)
    for query, before in zip(queries, expected, strict=True):
        ranking = functools.partial(rank, index, "kettle hall 3", query, 2_000.0, RANKING, 40)
        assert _summary(await ranked.ranked_once_per_text(ranking, index, query, 8)) == before


async def test_a_query_without_a_vector_is_ranked_by_keyword_on_any_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index, _ = _scope(200)
    ranking = functools.partial(rank, index, "kettle hall 3", None, 2_000.0, RANKING, 20, "keyword")
    before = _summary(await ranked.ranked_once_per_text(ranking, index, None, 5))
    assert before
    monkeypatch.setattr(ranked, "PRODUCT_IN_THREAD_ABOVE_RECORDS", 10)
    assert _summary(await ranked.ranked_once_per_text(ranking, index, None, 5)) == before


def test_ranks_among_counts_the_strictly_greater_values_ties_included() -> None:
    rng = np.random.default_rng(9)
    values = rng.integers(0, 40, 500).astype(np.float64) / 4  # many ties
    queries = np.concatenate([values[rng.integers(0, 500, 120)], rng.uniform(-1, 11, 30)])
    rng.shuffle(queries)
    naive = np.asarray([(values > q).sum() for q in queries], dtype=np.float64)
    np.testing.assert_array_equal(ranks_among(values, queries), naive)
    assert ranks_among(values, np.empty(0)).shape == (0,)
