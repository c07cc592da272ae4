"""The gateway's calibrated similarity scale, and how each embedder's raw cosine maps onto it.

Why: raw cosines of different models are not comparable (multilingual-e5 passes almost
every pair at 0.90, USE does not), yet policy thresholds (accept at 0.92, review band
0.85-0.92) must mean the same thing whatever embedder is configured.

The scale: calibrated(cos) = estimated probability that a pair of queries with this raw
cosine is a true paraphrase/duplicate. It is fitted per embedder by isotonic regression
(pool-adjacent-violators) of the duplicate label against the raw cosine, on public dev
pair sets with equal weight per language (English QQP, Chinese LCQMC; see
`gateway.evaluation.calibrate`). The fitted step function is stored as a monotone
piecewise-linear map of ~30 knots (raw -> calibrated), clamped to [0, 1], non-decreasing;
calibrated(1.0) is the curve's maximum. Only those knot numbers ship, never the data.

So a policy threshold of 0.92 means: "a pair scoring here is a duplicate about 92 % of the
time on question-pair data", a pointwise probability, the same claim for every model.

What the curve shows for USE (numbers in the calibration JSON's `fitted_on` block, all
12,129 QQP and 8,802 LCQMC pairs): pooled with equal weight per language, the isotonic
estimate reaches 0.85 at raw cosine 0.959 and 0.92 at 0.980, topping out at 0.967. On QQP
alone it reaches 0.92 only at raw 0.991 (its top ~1 % of pairs) and tops out at 0.94: QQP
precision is capped by its label noise. LCQMC alone gets there at 0.978. Since the pooled
curve does cross both policy levels with a review band of usable width (raw 0.959-0.980
holds ~4 % of QQP and ~12 % of LCQMC pairs), the probability scale is the default.

The alternative, `method="threshold-precision"`, maps a raw cosine t to the pooled dev
precision of accepting every pair with cos >= t (made monotone by the same isotonic fit).
It is more permissive (for USE: 0.85 at raw ~0.934, 0.92 at ~0.957) because 0.92 then
means "the accepted set is 92 % duplicates", not "this pair is". The calibrate command
fits it with `--method threshold-precision`, for embedders whose probability curve never
reaches the policy levels; the file records which scale it holds.

Pairs that differ only in an entity, number, date or negation score as high as true
paraphrases for every embedder: no calibration fixes that; the guards must.
"""

from __future__ import annotations

import bisect
import importlib.resources
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import orjson

from gateway.jsonfile import parse_json_object

CALIBRATION_FORMAT = 1
CALIBRATIONS_PACKAGE = "gateway.embed.calibrations"
_KNOT_LINES = re.compile(r"\[\s+(-?[0-9.eE+-]+),\s+(-?[0-9.eE+-]+)\s+\]")

Method = Literal["isotonic", "threshold-precision", "identity"]
FloatArray = npt.NDArray[np.float64]


class CalibrationError(ValueError):
    """A calibration file or knot list that is not a valid monotone map."""


@dataclass(frozen=True, slots=True)
class Calibration:
    """Monotone piecewise-linear map raw cosine -> calibrated similarity in [0, 1].

    Below the first knot the first value holds, above the last knot the last value holds;
    between knots the map is linear.
    """

    raw: tuple[float, ...]
    calibrated: tuple[float, ...]
    embedder: str = ""
    method: Method = "isotonic"
    # Provenance (data sets, pair counts, AUC, crossings): informative only.
    fitted_on: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.raw) != len(self.calibrated) or len(self.raw) < 2:
            raise CalibrationError("a calibration needs at least two (raw, calibrated) knots")
        for value in (*self.raw, *self.calibrated):
            if not math.isfinite(value):
                raise CalibrationError("calibration knots must be finite")
        if any(b <= a for a, b in zip(self.raw, self.raw[1:], strict=False)):
            raise CalibrationError("raw knots must be strictly increasing")
        if self.raw[0] < -1.0 or self.raw[-1] > 1.0:
            raise CalibrationError("raw knots must lie in [-1, 1]")
        if any(b < a for a, b in zip(self.calibrated, self.calibrated[1:], strict=False)):
            raise CalibrationError("calibrated knots must be non-decreasing")
        if self.calibrated[0] < 0.0 or self.calibrated[-1] > 1.0:
            raise CalibrationError("calibrated knots must lie in [0, 1]")

    def __call__(self, cosine: float) -> float:
        # bisect on a tuple: a scalar lookup per candidate, cheaper than np.interp's
        # array round trip on the request path.
        raw, cal = self.raw, self.calibrated
        if not cosine > raw[0]:  # also catches NaN: treat it as "no similarity"
            return cal[0]
        if cosine >= raw[-1]:
            return cal[-1]
        i = bisect.bisect_right(raw, cosine)
        x0, x1, y0, y1 = raw[i - 1], raw[i], cal[i - 1], cal[i]
        return y0 + (y1 - y0) * (cosine - x0) / (x1 - x0)

    def raw_threshold(self, level: float) -> float | None:
        """Smallest raw cosine whose calibrated value reaches `level`; None if it never does.

        Lets a caller turn a policy threshold into a raw-cosine prefilter for its index.
        """
        raw, cal = self.raw, self.calibrated
        if level <= cal[0]:
            return -1.0
        if level > cal[-1]:
            return None
        i = bisect.bisect_left(cal, level)  # first knot with cal >= level; i >= 1 here
        x0, x1, y0, y1 = raw[i - 1], raw[i], cal[i - 1], cal[i]
        return x1 if y1 == y0 else x0 + (x1 - x0) * (level - y0) / (y1 - y0)

    @classmethod
    def identity(cls, embedder: str = "") -> Calibration:
        """Raw cosine used as-is (negative cosines clamp to 0)."""
        return cls(raw=(0.0, 1.0), calibrated=(0.0, 1.0), embedder=embedder, method="identity")

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": CALIBRATION_FORMAT,
            "embedder": self.embedder,
            "method": self.method,
            "knots": [[x, y] for x, y in zip(self.raw, self.calibrated, strict=True)],
            "fitted_on": dict(self.fitted_on),
        }

    def to_json(self, path: Path | None = None) -> str:
        text = orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n"
        # One knot per line: the file is meant to be read and diffed by people.
        text = _KNOT_LINES.sub(r"[\1, \2]", text)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        if data.get("format") != CALIBRATION_FORMAT:
            raise CalibrationError(f"unsupported calibration format {data.get('format')!r}")
        method = data.get("method", "isotonic")
        if method not in ("isotonic", "threshold-precision", "identity"):
            raise CalibrationError(f"unknown calibration method {method!r}")
        try:
            knots = [(float(x), float(y)) for x, y in data["knots"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise CalibrationError("'knots' must be a list of [raw, calibrated] pairs") from exc
        return cls(
            raw=tuple(x for x, _ in knots),
            calibrated=tuple(y for _, y in knots),
            embedder=str(data.get("embedder", "")),
            method=method,
            fitted_on=dict(data.get("fitted_on", {})),
        )

    @classmethod
    def from_json(cls, source: Path | str) -> Calibration:
        """Read from a path, or parse a JSON document given as a str."""
        text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
        return cls.from_dict(parse_json_object(text, CalibrationError, "a calibration"))

    @classmethod
    def packaged(cls, embedder_name: str) -> Calibration:
        """The calibration shipped inside the package for this embedder."""
        resource = importlib.resources.files(CALIBRATIONS_PACKAGE) / f"{embedder_name}.json"
        try:
            text = resource.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise CalibrationError(f"no packaged calibration for {embedder_name!r}") from exc
        return cls.from_json(text)


# --- fitting -----------------------------------------------------------------------------


def pool_adjacent_violators(
    x: npt.ArrayLike, y: npt.ArrayLike, weights: npt.ArrayLike | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Weighted isotonic (non-decreasing) regression of y on x.

    Returns the blocks of the fitted step function, in increasing x: each block's weighted
    mean x, its fitted value and its total weight. Ties in x are pooled first, so equal
    inputs always get equal outputs.
    """
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    ws = np.ones_like(xs) if weights is None else np.asarray(weights, dtype=np.float64)
    if xs.ndim != 1 or xs.shape != ys.shape or xs.shape != ws.shape or xs.size == 0:
        raise ValueError("x, y and weights must be non-empty 1-D arrays of one length")
    unique_x, inverse = np.unique(xs, return_inverse=True)
    w = np.bincount(inverse, weights=ws)
    keep = w > 0
    wy = np.bincount(inverse, weights=ws * ys)[keep]
    wx = (unique_x * w)[keep]
    w = w[keep]
    # Stack of blocks as running sums; merge while the last two violate monotonicity.
    sum_w: list[float] = []
    sum_wy: list[float] = []
    sum_wx: list[float] = []
    for bw, bwy, bwx in zip(w.tolist(), wy.tolist(), wx.tolist(), strict=True):
        sum_w.append(bw)
        sum_wy.append(bwy)
        sum_wx.append(bwx)
        while len(sum_w) > 1 and sum_wy[-2] * sum_w[-1] >= sum_wy[-1] * sum_w[-2]:
            bw, bwy, bwx = sum_w.pop(), sum_wy.pop(), sum_wx.pop()
            sum_w[-1] += bw
            sum_wy[-1] += bwy
            sum_wx[-1] += bwx
    weight = np.array(sum_w)
    return np.array(sum_wx) / weight, np.array(sum_wy) / weight, weight


def _merge_small_blocks(
    centre: FloatArray, value: FloatArray, weight: FloatArray, min_weight: float
) -> tuple[FloatArray, FloatArray]:
    """Merge adjacent blocks until each holds `min_weight`: a handful of pairs is noise.

    Merging neighbours of a monotone sequence keeps it monotone (a weighted mean lies
    between its parts).
    """
    out_x: list[float] = []
    out_y: list[float] = []
    out_w: list[float] = []
    acc_w = acc_wx = acc_wy = 0.0
    for x, y, w in zip(centre.tolist(), value.tolist(), weight.tolist(), strict=True):
        acc_w, acc_wx, acc_wy = acc_w + w, acc_wx + w * x, acc_wy + w * y
        if acc_w >= min_weight:
            out_x.append(acc_wx / acc_w)
            out_y.append(acc_wy / acc_w)
            out_w.append(acc_w)
            acc_w = acc_wx = acc_wy = 0.0
    if acc_w > 0:
        if out_x:  # fold the light tail into the last block rather than keep it alone
            total = out_w[-1] + acc_w
            out_x[-1] = (out_x[-1] * out_w[-1] + acc_wx) / total
            out_y[-1] = (out_y[-1] * out_w[-1] + acc_wy) / total
        else:
            out_x.append(acc_wx / acc_w)
            out_y.append(acc_wy / acc_w)
    return np.array(out_x), np.array(out_y)


def _select_knots(x: FloatArray, y: FloatArray, max_knots: int) -> list[int]:
    """Greedy polyline simplification: keep the ends, then add the vertex the current
    polyline misses by most, until `max_knots`. A subset of a monotone polyline's vertices
    is still monotone, and steep stretches (where thresholds sit) keep their knots."""
    chosen = [0, len(x) - 1] if len(x) > 1 else [0]
    while len(chosen) < min(max_knots, len(x)):
        knots = sorted(chosen)
        error = np.abs(y - np.interp(x, x[knots], y[knots]))
        error[knots] = -1.0
        best = int(np.argmax(error))
        if error[best] <= 1e-4:
            break
        chosen.append(best)
    return sorted(chosen)


def knots_from_blocks(
    centre: FloatArray,
    value: FloatArray,
    weight: FloatArray,
    *,
    max_knots: int = 32,
    min_block_fraction: float = 0.005,
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Isotonic blocks -> at most `max_knots` (raw, calibrated) knots spanning [-1, 1]."""
    min_weight = float(weight.sum()) * min_block_fraction
    x, y = _merge_small_blocks(centre, value, weight, min_weight)
    keep = _select_knots(x, y, max_knots - 2)  # two more below: the ends of [-1, 1]
    raw = [float(v) for v in x[keep]]
    cal = [min(1.0, max(0.0, float(v))) for v in y[keep]]
    # Flat extensions to the cosine range: calibrated(1.0) is the curve's maximum.
    if raw[0] > -1.0:
        raw.insert(0, -1.0)
        cal.insert(0, cal[0])
    if raw[-1] < 1.0:
        raw.append(1.0)
        cal.append(cal[-1])
    # Guard against float noise: calibrated values must never decrease.
    cal = np.maximum.accumulate(np.array(cal)).tolist()
    return tuple(round(v, 6) for v in raw), tuple(round(v, 6) for v in cal)


def threshold_precision(
    cosine: FloatArray, labels: FloatArray, weights: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Weighted precision of "accept when cos >= t" at every distinct observed t.

    Returns (t, precision, weight of the pairs exactly at t), t increasing.
    """
    unique_t, inverse = np.unique(cosine, return_inverse=True)
    w = np.bincount(inverse, weights=weights).astype(np.float64)
    wy = np.bincount(inverse, weights=weights * labels)
    # Suffix sums: everything at or above each t.
    above_w = np.cumsum(w[::-1])[::-1]
    above_wy = np.cumsum(wy[::-1])[::-1]
    return unique_t, above_wy / above_w, w


def fit_calibration(
    cosine: npt.ArrayLike,
    labels: npt.ArrayLike,
    weights: npt.ArrayLike | None = None,
    *,
    method: Method = "isotonic",
    embedder: str = "",
    max_knots: int = 32,
    fitted_on: Mapping[str, Any] | None = None,
) -> Calibration:
    """Fit the gateway scale for one embedder from labelled raw cosines."""
    cos = np.asarray(cosine, dtype=np.float64)
    lab = np.asarray(labels, dtype=np.float64)
    w = np.ones_like(cos) if weights is None else np.asarray(weights, dtype=np.float64)
    if method == "identity":
        return Calibration.identity(embedder)
    if method == "isotonic":
        centre, value, weight = pool_adjacent_violators(cos, lab, w)
    else:
        t, precision, weight_at = threshold_precision(cos, lab, w)
        # Precision of a threshold wiggles where few pairs lie above it; the isotonic
        # fit of that curve is its closest monotone version.
        centre, value, weight = pool_adjacent_violators(t, precision, weight_at)
    raw, cal = knots_from_blocks(centre, value, weight, max_knots=max_knots)
    return Calibration(
        raw=raw, calibrated=cal, embedder=embedder, method=method, fitted_on=fitted_on or {}
    )


def roc_auc(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """Area under the ROC curve (Mann-Whitney U, ties counted half)."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(bool)
    positives, negatives = int(y.sum()), int((~y).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    # Average rank (1-based) of each distinct value, so ties share their rank.
    ends = np.cumsum(counts)
    average_rank = ends - (counts - 1) / 2.0
    ranks = average_rank[inverse]
    u = float(ranks[y].sum()) - positives * (positives + 1) / 2.0
    return u / (positives * negatives)


def crossings(calibration: Calibration, levels: Sequence[float]) -> dict[str, float | None]:
    """Raw cosine at which the calibrated scale reaches each level (None: never)."""
    return {f"{level:g}": calibration.raw_threshold(level) for level in levels}
