"""Ranking a large scope scores only a candidate set with the relevance model, and
returns what scoring every memory returns."""

from __future__ import annotations

import numpy as np

from gateway.memory import candidates
from gateway.memory.relevance import (
    neighbours,
    packaged_relevance_model,
    relevance_features,
    relevance_features_at,
)
from gateway.memory.retrieval import ScopeIndex, rank
from gateway.policy.memory import MemoryPolicy
from tests.unit.memory.fakes import random_scope

RANKING = MemoryPolicy().ranking
WORDS = [
    "heron",
    "lantern",
    "kettle",
    "compass",
    "anchor",
    "violin",
    "marble",
    "falcon",
    "ribbon",
    "quartz",
]


def _scope(count: int, seed: int = 7) -> tuple[ScopeIndex, list[np.ndarray]]:
    return random_scope(
        count,
        seed,
        20,
        lambda rng, i: f"The {rng.choice(WORDS)} and the {rng.choice(WORDS)} are in hall {i % 37}.",
    )


class CountingScorer:
    """The packaged model, remembering how many memories it was asked to score."""

    def __init__(self) -> None:
        self.rows: list[int] = []

    def probability(self, features: np.ndarray) -> np.ndarray:
        self.rows.append(features.shape[0])
        return packaged_relevance_model().probability(features)


def test_features_of_some_rows_are_those_rows_of_the_whole_scope() -> None:
    rng = np.random.default_rng(3)
    cosine = rng.uniform(-0.2, 0.9, 50)
    keyword = np.where(rng.random(50) < 0.3, rng.random(50), 0.0)
    has_vector = rng.random(50) < 0.9
    created_at = rng.uniform(0, 100, 50)
    rows = np.asarray([0, 4, 9, 17, 33, 49], dtype=np.int64)
    every = relevance_features(cosine, keyword, has_vector, created_at)
    some = relevance_features_at(rows, cosine, keyword, has_vector, neighbours(created_at))
    np.testing.assert_array_equal(some, every[rows])


def test_a_large_scope_scores_only_candidates_and_ranks_as_if_all_were_scored() -> None:
    index, queries = _scope(3_000)
    for query_vector in queries[:10]:
        scorer = CountingScorer()
        found = rank(index, "where is the falcon lantern", query_vector, 5_000.0, RANKING, 30,
                     relevance_model=scorer)  # fmt: skip
        # Every memory scored: the same results, in the same order, with the same scores.
        full = rank(index, "where is the falcon lantern", query_vector, 5_000.0, RANKING, 30,
                    candidates_per_signal=index.size)  # fmt: skip
        assert scorer.rows[0] < index.size // 2
        assert [(s.record.id, s.score, s.relevance) for s in found] == [
            (s.record.id, s.score, s.relevance) for s in full
        ]
        assert len(found) == 30


def test_a_scope_no_larger_than_the_pool_is_scored_whole() -> None:
    index, queries = _scope(2 * candidates.RELEVANCE_CANDIDATES_PER_SIGNAL)
    scorer = CountingScorer()
    rank(index, "falcon", queries[0], 5_000.0, RANKING, 10, relevance_model=scorer)
    assert scorer.rows == [index.size]


def test_candidates_hold_each_signal_best_and_their_neighbours() -> None:
    count = 2_000
    cosine = np.linspace(0.0, 1.0, count)  # the best by meaning: the last rows
    keyword = np.zeros(count)
    keyword[[5, 6]] = [0.9, 0.4]
    created_at = np.arange(count, dtype=np.float64)
    rows = candidates.candidate_rows(
        cosine, np.ones(count, dtype=bool), keyword, neighbours(created_at), per_signal=3
    )
    # Keyword hits 5 and 6 with neighbours 4 and 7; the three best by cosine with 1996.
    assert rows.tolist() == [4, 5, 6, 7, 1996, 1997, 1998, 1999]
