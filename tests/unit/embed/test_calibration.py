from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from gateway.embed.calibration import Calibration, CalibrationError
from gateway.embed.calibration_fit import (
    crossings,
    fit_calibration,
    pool_adjacent_violators,
    roc_auc,
)


def test_pav_pools_violators_into_weighted_means() -> None:
    centre, value, weight = pool_adjacent_violators([1, 2, 3, 4], [0, 1, 0, 1])
    # (2, 3) violate: pooled to 0.5 at x 2.5.
    assert value.tolist() == [0.0, 0.5, 1.0]
    assert centre.tolist() == [1.0, 2.5, 4.0]
    assert weight.tolist() == [1.0, 2.0, 1.0]


def test_pav_respects_weights_and_ties() -> None:
    _, value, _ = pool_adjacent_violators([1, 2], [1, 0], weights=[3, 1])
    assert value.tolist() == [0.75]
    # Equal x values always get one fitted value.
    centre, value, _ = pool_adjacent_violators([1, 1, 2], [0, 1, 1])
    assert centre.tolist() == [1.0, 2.0]
    assert value.tolist() == [0.5, 1.0]


def test_pav_output_is_non_decreasing_on_noisy_data() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 2000)
    y = (rng.uniform(0, 1, 2000) < (x + 1) / 2).astype(float)
    _, value, weight = pool_adjacent_violators(x, y)
    assert np.all(np.diff(value) > 0)
    assert weight.sum() == pytest.approx(2000)


def test_calibration_interpolates_and_clamps() -> None:
    cal = Calibration(raw=(0.5, 0.9, 1.0), calibrated=(0.1, 0.5, 0.9))
    assert cal(0.7) == pytest.approx(0.3)
    assert cal(-1.0) == 0.1
    assert cal(2.0) == 0.9
    assert cal(1.0) == 0.9
    assert cal(math.nan) == 0.1
    assert cal.raw_threshold(0.5) == pytest.approx(0.9)
    assert cal.raw_threshold(0.3) == pytest.approx(0.7)
    assert cal.raw_threshold(0.95) is None
    assert cal.raw_threshold(0.0) == -1.0


@pytest.mark.parametrize(
    ("raw", "calibrated"),
    [
        ((0.5, 0.4), (0.1, 0.2)),  # raw not increasing
        ((0.1, 0.2), (0.5, 0.4)),  # calibrated decreasing
        ((0.1, 0.2), (0.5, 1.2)),  # above 1
        ((-1.5, 0.2), (0.0, 1.0)),  # outside the cosine range
        ((0.1,), (0.5,)),  # a single knot
        ((0.1, math.nan), (0.1, 0.2)),
    ],
)
def test_invalid_knots_are_rejected(raw: tuple[float, ...], calibrated: tuple[float, ...]) -> None:
    with pytest.raises(CalibrationError):
        Calibration(raw=raw, calibrated=calibrated)


def test_identity_uses_raw_cosine() -> None:
    cal = Calibration.identity("x")
    assert cal(0.93) == pytest.approx(0.93)
    assert cal(-0.2) == 0.0
    assert cal.method == "identity"


def test_json_round_trip(tmp_path: Path) -> None:
    cal = Calibration(
        raw=(-1.0, 0.8, 1.0),
        calibrated=(0.0, 0.4, 0.95),
        embedder="e",
        method="threshold-precision",
        fitted_on={"sets": {"toy": {"pairs": 3}}},
    )
    path = tmp_path / "sub" / "cal.json"
    text = cal.to_json(path)
    assert Calibration.from_json(path) == cal
    assert Calibration.from_json(text) == cal
    assert "[0.8, 0.4]" in text  # one knot per line


def test_from_json_rejects_bad_documents() -> None:
    with pytest.raises(CalibrationError):
        Calibration.from_json("not json")
    with pytest.raises(CalibrationError):
        Calibration.from_json('{"format": 99, "knots": [[0, 0], [1, 1]]}')
    with pytest.raises(CalibrationError):
        Calibration.from_json('{"format": 1, "knots": [1, 2]}')


def _toy_pairs(n: int = 4000, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    cos = rng.uniform(0.0, 1.0, n)
    labels = (rng.uniform(0, 1, n) < cos**4).astype(float)  # P(dup | cos) = cos^4
    return cos, labels


@pytest.mark.parametrize("method", ["isotonic", "threshold-precision", "precision"])
def test_fitted_map_is_monotone_clamped_and_compact(method: str) -> None:
    cos, labels = _toy_pairs()
    cal = fit_calibration(cos, labels, method=method, max_knots=24)  # type: ignore[arg-type]
    # The precision scale is a staircase at fixed levels: two knots a step.
    assert 3 <= len(cal.raw) <= (64 if method == "precision" else 24)
    assert cal.raw[0] == -1.0 and cal.raw[-1] == 1.0
    assert all(b >= a for a, b in itertools.pairwise(cal.calibrated))
    assert cal.calibrated[0] >= 0.0 and cal.calibrated[-1] <= 1.0
    grid = [cal(x) for x in np.linspace(-1.2, 1.2, 500)]
    assert all(b >= a for a, b in itertools.pairwise(grid))
    assert cal(1.0) == max(cal.calibrated)


def test_isotonic_fit_recovers_the_probability_curve() -> None:
    cos, labels = _toy_pairs(n=20000)
    cal = fit_calibration(cos, labels)
    for x in (0.5, 0.7, 0.9):
        assert cal(x) == pytest.approx(x**4, abs=0.06)
    assert crossings(cal, [0.5])["0.5"] == pytest.approx(0.5**0.25, abs=0.03)


def test_roc_auc() -> None:
    assert roc_auc([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]) == 1.0
    assert roc_auc([0.9, 0.8, 0.2, 0.1], [0, 0, 1, 1]) == 0.0
    assert roc_auc([0.5, 0.5], [0, 1]) == 0.5
    assert math.isnan(roc_auc([0.5, 0.6], [1, 1]))


def test_packaged_use_calibration_is_per_language_and_puts_thresholds_high() -> None:
    cal = Calibration.packaged("use-multilingual-v3")
    assert cal.embedder == "use-multilingual-v3"
    assert cal.method == "precision"
    assert set(cal.languages) == {"en", "zh"}
    for language in ("en", "zh"):
        curve = cal.languages[language]
        assert 8 <= len(curve.raw) <= 64
        # At the default target the served candidates are near-identical for USE: raw
        # 0.90 is a duplicate only ~80 % (en) / ~60 % (zh) of the time after the checks.
        accept = cal.raw_threshold(0.97, language)
        assert accept is not None and 0.93 < accept < 0.99
        assert cal(accept, language) == pytest.approx(0.97, abs=1e-6)
        # Each curve's top is its ceiling (the measured precision recorded beside it).
        assert cal(1.0, language) == 1.0
        assert 0.9 < curve.fitted_on["ceiling"] <= 1.0
    assert cal(0.95, "zh") != cal(0.95, "en")
    assert cal(0.95, "ja") == cal(0.95)  # a language without a curve: the pooled one
    with pytest.raises(CalibrationError):
        Calibration.packaged("no-such-model")


def test_per_language_curves_round_trip_and_pick_by_language(tmp_path: Path) -> None:
    zh = Calibration(raw=(0.0, 0.9, 1.0), calibrated=(0.1, 0.5, 1.0), method="precision")
    cal = Calibration(
        raw=(0.0, 1.0),
        calibrated=(0.0, 1.0),
        embedder="e",
        method="precision",
        languages={"zh": zh},
    )
    assert cal(0.9) == pytest.approx(0.9)
    assert cal(0.9, "zh") == pytest.approx(0.5)
    assert cal(0.9, "en") == pytest.approx(0.9)  # no English curve: the pooled one
    assert cal.raw_threshold(0.5, "zh") == pytest.approx(0.9)
    assert cal.raw_threshold(0.5) == pytest.approx(0.5)
    text = cal.to_json(tmp_path / "cal.json")
    assert '"languages"' in text and "[0.9, 0.5]" in text
    again = Calibration.from_json(text)
    assert again(0.9, "zh") == pytest.approx(0.5)
    assert again.languages["zh"].raw == zh.raw
    with pytest.raises(CalibrationError):
        Calibration(raw=(0.0, 1.0), calibrated=(0.0, 1.0), languages={"zh": cal})


def test_format_1_files_are_still_read() -> None:
    cal = Calibration.from_json('{"format": 1, "method": "isotonic", "knots": [[0, 0], [1, 1]]}')
    assert cal(0.5) == pytest.approx(0.5) and cal(0.5, "zh") == pytest.approx(0.5)
    with pytest.raises(CalibrationError):
        Calibration.from_json('{"format": 2, "knots": [[0, 0], [1, 1]], "languages": [1]}')


def test_precision_scale_is_the_precision_of_serving_from_each_knot() -> None:
    cos, labels = _toy_pairs(n=20000)
    cal = fit_calibration(cos, labels, method="precision")
    assert all(b >= a for a, b in itertools.pairwise(cal.calibrated))
    top = cal.fitted_on["ceiling_from_raw"]
    # Below the top, serving from a knot is at least as precise as the scale says there
    # (a staircase below the measured curve), and not far below (levels 0.01 from 0.85).
    for raw, value in zip(cal.raw[1:], cal.calibrated[1:], strict=True):
        if raw >= top:
            break
        measured = labels[cos >= raw].mean()
        assert measured >= value - 1e-9
        if value >= 0.85:
            assert measured - value <= 0.03
    # The top, where precision stops rising, is 1.0; its measured value is kept.
    assert cal(1.0) == 1.0
    assert labels[cos >= top].mean() == pytest.approx(cal.fitted_on["ceiling"], abs=0.005)
    assert cal.raw_threshold(1.0) == pytest.approx(top)


def test_precision_scale_reaches_its_ceiling_where_precision_stops_rising() -> None:
    # Label noise: every pair from 0.9 up is a duplicate 94 % of the time, whatever its
    # cosine; below, less and less often.
    rng = np.random.default_rng(3)
    cos = rng.uniform(0.5, 1.0, 30000)
    p = np.where(cos >= 0.9, 0.94, 0.94 * (cos - 0.5) / 0.4)
    labels = (rng.uniform(0, 1, cos.size) < p).astype(float)
    cal = fit_calibration(cos, labels, method="precision")
    top = cal.fitted_on["ceiling_from_raw"]
    assert 0.9 <= top < 1.0
    assert cal.fitted_on["ceiling"] == pytest.approx(0.94, abs=0.02)
    # A target above the ceiling (0.97) is served from where precision stopped rising,
    # not never; the most similar ~2 % of pairs alone cannot make the ceiling.
    assert cal.raw_threshold(0.97) == pytest.approx(top, abs=0.002)
    assert (cos >= top).mean() >= 0.02
