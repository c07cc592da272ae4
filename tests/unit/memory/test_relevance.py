"""The calibrated relevance model: its features, the shipped weights, bad files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gateway.memory.relevance import (
    FEATURE_NAMES,
    RelevanceModel,
    RelevanceModelFormatError,
    competition_rank,
    neighbours,
    packaged_relevance_model,
    relevance_features,
)


def column(features: np.ndarray, name: str) -> np.ndarray:
    return features[:, FEATURE_NAMES.index(name)]


def test_ties_share_their_rank() -> None:
    ranks = competition_rank(np.asarray([0.2, 0.9, 0.2, 0.5]))
    assert ranks.tolist() == [2.0, 0.0, 2.0, 1.0]


def test_neighbours_follow_creation_time_not_row_order() -> None:
    before, after = neighbours(np.asarray([30.0, 10.0, 20.0]))
    assert before.tolist() == [2, -1, 1]
    assert after.tolist() == [-1, 2, 0]


def test_features_rank_within_the_query_and_read_the_neighbours() -> None:
    cosine = np.asarray([0.1, 0.6, 0.3])
    keyword = np.asarray([0.8, 0.0, 0.4])
    features = relevance_features(cosine, keyword, np.ones(3, dtype=bool), np.arange(3.0))
    assert features.shape == (3, len(FEATURE_NAMES))
    assert column(features, "keyword_rank").tolist() == pytest.approx(
        [0.0, np.log1p(3), np.log1p(1)]
    )
    assert column(features, "keyword_share").tolist() == pytest.approx([1.0, 0.0, 0.5])
    assert column(features, "cosine_gap").tolist() == pytest.approx([-0.5, 0.0, -0.3])
    # Row 1 (no keyword match) sits between the two rows that match: lifted by row 0.
    # Rows 0 and 2 match better than their neighbours: no lift, and no penalty.
    assert column(features, "neighbour_keyword_lift").tolist() == pytest.approx([0.0, 1.0, 0.0])
    assert column(features, "neighbour_cosine_lift").tolist() == pytest.approx([0.5, 0.0, 0.3])


def test_without_a_query_vector_every_memory_ranks_last_by_meaning() -> None:
    features = relevance_features(
        np.zeros(2), np.asarray([0.5, 0.0]), np.zeros(2, dtype=bool), np.arange(2.0)
    )
    assert column(features, "dense_rank").tolist() == pytest.approx([np.log1p(2)] * 2)
    assert column(features, "dense_top").tolist() == [0.0, 0.0]


def test_the_shipped_model_is_a_probability_that_rises_with_the_match() -> None:
    model = packaged_relevance_model()
    assert model.embedder == "use-multilingual-v3"
    cosine = np.asarray([0.55, 0.2, 0.2, 0.2, 0.2])
    keyword = np.asarray([0.9, 0.0, 0.0, 0.1, 0.0])
    features = relevance_features(cosine, keyword, np.ones(5, dtype=bool), np.arange(5.0) * 100)
    p = model.probability(features)
    assert np.all((p > 0) & (p < 1))
    assert p[0] == p.max() and p[0] > 10 * p[2]
    # The memory stored next to the match (a reply to it, say) is lifted above the rest.
    assert p[1] > 10 * p[2]


def test_a_model_round_trips_and_bad_files_are_refused() -> None:
    model = packaged_relevance_model()
    again = RelevanceModel.from_json(json.dumps(model.to_dict()))
    assert again.weights.tolist() == model.weights.tolist() and again.bias == model.bias
    for change in (
        {"format": "other"},
        {"features": ["cosine"]},
        {"weights": [1.0]},
        {"scales": [0.0] * len(FEATURE_NAMES)},
    ):
        with pytest.raises(RelevanceModelFormatError):
            RelevanceModel.from_dict({**model.to_dict(), **change})
