"""The storage benchmark's data and its grading: exact top-k across chunks, recall, and
the clustered vectors' documented structure."""

from __future__ import annotations

import numpy as np
import pytest

from gateway_tools.bench.vector_data import (
    CLUSTERED,
    RANDOM_SPHERE,
    VectorSource,
    exact_top_k,
    recall,
)


def test_exact_top_k_agrees_with_a_full_sort_across_chunk_boundaries() -> None:
    rng = np.random.default_rng(5)
    vectors = VectorSource(RANDOM_SPHERE, 60_000, 16, seed=1).draw(rng, 60_000)  # > one chunk
    queries = vectors[[3, 49_999, 50_000, 59_999]] + 0.01
    truth = exact_top_k(vectors, None, queries, 5)
    for query, found in zip(queries, truth, strict=True):
        assert found == np.argsort(-(vectors @ query), kind="stable")[:5].tolist()
    rows = np.arange(7, 60_000, 100)
    subset = exact_top_k(vectors, rows, queries[:1], 3)[0]
    assert subset == rows[np.argsort(-(vectors[rows] @ queries[0]))[:3]].tolist()


def test_recall_is_the_share_of_true_neighbours_returned() -> None:
    assert recall([[1, 2, 3], [4, 9, 8]], [[3, 2, 1], [4, 5, 6]]) == pytest.approx(4 / 6, abs=1e-4)
    assert recall([[]], [[1, 2]]) == 0.0


def test_clustered_vectors_have_topics_and_a_common_direction() -> None:
    rng = np.random.default_rng(2)
    source = VectorSource(CLUSTERED, 2_000, 512, seed=3)
    vectors = source.draw(rng, 2_000)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    scores = vectors @ vectors.T
    np.fill_diagonal(scores, np.nan)
    # Unrelated prompts still score ~0.2; each vector's best match is a topic mate ~0.75.
    assert 0.15 < float(np.nanmedian(scores)) < 0.25
    assert 0.7 < float(np.median(np.nanmax(scores, axis=1))) < 0.85
    uniform = VectorSource(RANDOM_SPHERE, 2_000, 512, seed=3).draw(rng, 500)
    assert abs(float(np.median(uniform[:250] @ uniform[250:].T))) < 0.02
