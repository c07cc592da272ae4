"""`retrieval.top_rows`: the top of the ranking without sorting the whole scope, exactly
what the full stable sort gives (ties in row order, left-out rows last)."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.memory.retrieval import top_rows


def _full_sort(scores: np.ndarray, top_k: int) -> list[int]:
    return [int(row) for row in np.argsort(-scores, kind="stable")[:top_k]]


@pytest.mark.parametrize("top_k", [1, 2, 5, 30, 99, 100, 150])
def test_top_rows_equal_the_stable_full_sort_with_ties_and_left_out_rows(top_k: int) -> None:
    rng = np.random.default_rng(top_k)
    for _ in range(50):
        # Two decimals: many equal scores, also across the k-th place.
        scores = np.round(rng.random(100), 2)
        scores[rng.random(100) < 0.3] = -np.inf  # rows `rank` leaves out
        assert [int(row) for row in top_rows(scores, top_k)] == _full_sort(scores, top_k)


def test_ties_at_the_cut_keep_the_lower_rows() -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.9, 0.1])
    assert top_rows(scores, 3).tolist() == [1, 4, 0]
    assert top_rows(scores, 4).tolist() == [1, 4, 0, 2]
    everything_left_out = np.full(4, -np.inf)
    assert top_rows(everything_left_out, 2).tolist() == [0, 1]
