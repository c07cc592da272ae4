"""Training helpers on small synthetic data (the real training reads ../shared/data)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gateway.review.model import AdditiveModel
from gateway_tools.training import train_reviewer as train


def test_roc_auc_counts_ties_half() -> None:
    labels = np.array([0.0, 0.0, 1.0, 1.0])
    assert train.roc_auc(np.array([0.1, 0.2, 0.3, 0.4]), labels) == 1.0
    assert train.roc_auc(np.array([0.5, 0.5, 0.5, 0.5]), labels) == 0.5


def test_threshold_keeps_false_accepts_within_budget() -> None:
    negatives = np.linspace(0.0, 1.0, 101)
    threshold = train.threshold_for_false_accept(negatives, 0.05)
    assert (negatives >= threshold).mean() <= 0.05
    assert (negatives >= threshold - 0.011).mean() > 0.05  # not needlessly strict


def _synthetic(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, size=(2000, 2))
    logit = 6 * (x[:, 0] - 0.5) - 3 * (x[:, 1] - 0.5)
    y = (rng.uniform(size=2000) < 1 / (1 + np.exp(-logit))).astype(float)
    return x, y


def test_stumps_learn_and_respect_directions(monkeypatch: pytest.MonkeyPatch) -> None:
    x, y = _synthetic()
    weights = np.ones(len(y))
    params = train.BoostingParams(rounds=100)
    monkeypatch.setattr(train, "MONOTONE", {"up": 1, "down": 1})
    # "down" really lowers the odds, but it may only raise them: it must stay flat.
    model = train.fit_stumps(x, y, weights, params, ("up", "down"))
    up, down = model.steps
    assert list(up.values) == sorted(up.values) and len(up.values) > 1
    assert len(set(down.values)) == 1
    assert train.roc_auc(train.predict(model, x), y) > 0.8


def test_vectorised_predict_matches_the_model() -> None:
    x, y = _synthetic(1)
    model = train.fit_stumps(x, y, np.ones(len(y)), train.BoostingParams(rounds=30), ("up", "down"))
    assert isinstance(model, AdditiveModel)
    vectorised = train.predict(model, x[:50])
    one_by_one = [model.probability(list(row)) for row in x[:50]]
    assert np.allclose(vectorised, one_by_one)


def test_read_paws_skips_broken_rows(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text(
        "id\tsentence1\tsentence2\tlabel\n"
        "1\tA cat sat .\tA cat was sitting .\t1\n"
        "2\tBroken row\n"
        "3\t\tEmpty first\t0\n"
        "4\tX met Y .\tY met X .\t0\n",
        encoding="utf-8",
    )
    pairs = train.read_paws(path, "en")
    assert [(p.label, p.language) for p in pairs] == [(1, "en"), (0, "en")]


def test_read_paws_refuses_other_files(tmp_path: Path) -> None:
    path = tmp_path / "other.tsv"
    path.write_text("a\tb\tc\n", encoding="utf-8")
    with pytest.raises(ValueError):
        train.read_paws(path, "en")


def test_similarity_scale_is_named() -> None:
    scale, name = train.load_similarity_scale()
    assert name in ("calibrated", "raw")
    assert 0.0 <= scale(0.9) <= 1.0
