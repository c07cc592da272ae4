"""The gateway's calibrated similarity scale, and how each embedder's raw cosine maps onto it.

Why: raw cosines of different models are not comparable (multilingual-e5 passes almost
every pair at 0.90, USE does not), and not even one model's cosines mean the same thing in
every language; yet a policy (`semantic_cache.target_precision`) must mean the same thing
whatever embedder is configured and whatever language is asked.

The scale (method `precision`, the shipped one): calibrated(cos) = the precision of
serving every candidate whose raw cosine is at least `cos`, measured on public dev pair
sets among the pairs that reach a threshold in the gateway, i.e. that passed the entity
comparison and the structure guard (pairs the checks refuse never meet one). So a target
precision is a calibrated level: serve at or above it, and the hits on data like the dev
sets are that precise. It is fitted per language of the ask (`gateway.nlp.detect_language`:
`zh` when CJK characters make up at least a quarter of the letters, else `en`), because
USE puts the two languages differently on its cosine scale (serving every checked pair
from raw cosine 0.94 up is 93 % precise in English, 96 % in Chinese; English tops out
at 0.947, Chinese at 0.988), with each dev set of a language weighted equally. Only the
knots ship, never the data.

Fit: the precision of "cos >= t" at every observed t, made non-decreasing by isotonic
regression (pool-adjacent-violators), read from the START of each pooled block (every
prefix of a pooled block averages at least the block's value, so serving from its start
is at least that precise), and written as a staircase at fixed levels (every 0.05, every
0.01 from 0.85): each level from the lowest cosine that reaches it, the lower level in
between, so no threshold reads more precise than measured. The top block (at least 2 %
of the weight) is where precision stops rising with the cosine: its pairs are labelled
duplicates as often as near-identical texts are, and the scale puts it at 1.0 (the
measured value is kept as the curve's `ceiling`; label noise caps English at 0.947,
Chinese at 0.988 for USE). A target above a language's ceiling is therefore served from
where that language's precision stops rising, not never.

The older methods stay readable: `isotonic` (calibrated(cos) = P(duplicate | cos), a
pointwise probability, knots at block centres), `threshold-precision` (the precision
curve with knots at block centres and no ceiling), and `identity` (raw cosine; what a
litellm embedder without a fitted calibration uses).

Pairs that differ only in an entity, number, date or negation score as high as true
paraphrases for every embedder: no calibration fixes that; the checks must, which is
why the scale is fitted after them.
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

from gateway.errors import GatewayInternalError
from gateway.jsonfile import parse_json_object

CALIBRATION_FORMAT = 2  # 2 adds per-language curves; format 1 files are still read
_READABLE_FORMATS = (1, 2)
CALIBRATIONS_PACKAGE = "gateway.embed.calibrations"
_KNOT_LINES = re.compile(r"\[\s+(-?[0-9.eE+-]+),\s+(-?[0-9.eE+-]+)\s+\]")

Method = Literal["precision", "isotonic", "threshold-precision", "identity"]
METHODS: tuple[str, ...] = ("precision", "isotonic", "threshold-precision", "identity")
FloatArray = npt.NDArray[np.float64]


class CalibrationError(GatewayInternalError, ValueError):
    """A calibration file or knot list that is not a valid monotone map."""


@dataclass(frozen=True, slots=True)
class Calibration:
    """Monotone piecewise-linear map raw cosine -> calibrated similarity in [0, 1].

    Below the first knot the first value holds, above the last knot the last value holds;
    between knots the map is linear. `languages` holds a curve per language of the ask
    (`en`, `zh`); the top-level knots are the curve for a caller that names no language
    (or one without a curve of its own), fitted on all languages together.
    """

    raw: tuple[float, ...]
    calibrated: tuple[float, ...]
    embedder: str = ""
    method: Method = "isotonic"
    # Provenance (data sets, pair counts, AUC, crossings): informative only.
    fitted_on: Mapping[str, Any] = field(default_factory=dict)
    languages: Mapping[str, Calibration] = field(default_factory=dict)

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
        if any(curve.languages for curve in self.languages.values()):
            raise CalibrationError("a language's curve cannot have languages of its own")

    def curve(self, language: str | None = None) -> Calibration:
        """The curve for `language`, or the all-language one."""
        if language is None:
            return self
        return self.languages.get(language, self)

    def __call__(self, cosine: float, language: str | None = None) -> float:
        # bisect on a tuple: a scalar lookup per candidate, cheaper than np.interp's
        # array round trip on the request path.
        curve = self.languages.get(language, self) if language is not None else self
        raw, cal = curve.raw, curve.calibrated
        if not cosine > raw[0]:  # also catches NaN: treat it as "no similarity"
            return cal[0]
        if cosine >= raw[-1]:
            return cal[-1]
        i = bisect.bisect_right(raw, cosine)
        x0, x1, y0, y1 = raw[i - 1], raw[i], cal[i - 1], cal[i]
        return y0 + (y1 - y0) * (cosine - x0) / (x1 - x0)

    def raw_threshold(self, level: float, language: str | None = None) -> float | None:
        """Smallest raw cosine whose calibrated value reaches `level`; None if it never does.

        Turns a policy level (a target precision) into the raw cosine it means, e.g. for a
        raw-cosine prefilter of an index, or for the README's table.
        """
        curve = self.curve(language)
        raw, cal = curve.raw, curve.calibrated
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
        data: dict[str, Any] = {
            "format": CALIBRATION_FORMAT,
            "embedder": self.embedder,
            "method": self.method,
            "knots": _knot_list(self),
        }
        if self.languages:
            data["languages"] = {
                name: {"knots": _knot_list(curve), "fitted_on": dict(curve.fitted_on)}
                for name, curve in sorted(self.languages.items())
            }
        data["fitted_on"] = dict(self.fitted_on)
        return data

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
        if data.get("format") not in _READABLE_FORMATS:
            raise CalibrationError(f"unsupported calibration format {data.get('format')!r}")
        method = data.get("method", "isotonic")
        if method not in METHODS:
            raise CalibrationError(f"unknown calibration method {method!r}")
        raw, calibrated = _read_knots(data)
        languages = data.get("languages", {})
        if not isinstance(languages, Mapping) or not all(
            isinstance(v, Mapping) for v in languages.values()
        ):
            raise CalibrationError("'languages' must map a language to an object with 'knots'")
        curves = {}
        for name, entry in languages.items():
            lang_raw, lang_cal = _read_knots(entry)
            curves[str(name)] = cls(
                raw=lang_raw,
                calibrated=lang_cal,
                embedder=str(data.get("embedder", "")),
                method=method,
                fitted_on=dict(entry.get("fitted_on", {})),
            )
        return cls(
            raw=raw,
            calibrated=calibrated,
            embedder=str(data.get("embedder", "")),
            method=method,
            fitted_on=dict(data.get("fitted_on", {})),
            languages=curves,
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


def _knot_list(curve: Calibration) -> list[list[float]]:
    return [[x, y] for x, y in zip(curve.raw, curve.calibrated, strict=True)]


def _read_knots(data: Mapping[str, Any]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    try:
        knots = [(float(x), float(y)) for x, y in data["knots"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise CalibrationError("'knots' must be a list of [raw, calibrated] pairs") from exc
    return tuple(x for x, _ in knots), tuple(y for _, y in knots)


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


def precision_blocks(
    cosine: FloatArray, labels: FloatArray, weights: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The precision of "serve when cos >= t", made non-decreasing in t by isotonic
    regression: its blocks as (start t, value, weight), t increasing.

    A block's start is its lowest threshold. Every prefix of a pooled block averages at
    least the block's value (or it would not have been pooled), so serving from a
    block's start is at least as precise as the value says.
    """
    t, precision, weight_at = threshold_precision(cosine, labels, weights)
    starts: list[float] = []
    sum_w: list[float] = []
    sum_wy: list[float] = []
    for x, y, w in zip(t.tolist(), precision.tolist(), weight_at.tolist(), strict=True):
        if w <= 0:
            continue
        starts.append(x)
        sum_w.append(w)
        sum_wy.append(w * y)
        while len(sum_w) > 1 and sum_wy[-2] * sum_w[-1] >= sum_wy[-1] * sum_w[-2]:
            bw, bwy = sum_w.pop(), sum_wy.pop()
            starts.pop()
            sum_w[-1] += bw
            sum_wy[-1] += bwy
    weight = np.array(sum_w)
    return np.array(starts), np.array(sum_wy) / weight, weight


def ceiling_start(weight: FloatArray, min_fraction: float = 0.02) -> int:
    """Index of the block from which a language's precision stops rising: the top
    isotonic block, widened downwards until it holds `min_fraction` of the weight, so
    that a handful of most similar pairs (labelled duplicates by chance) cannot make
    the ceiling on their own."""
    needed = float(weight.sum()) * min_fraction
    top, held = len(weight) - 1, float(weight[-1])
    while top > 0 and held < needed:
        top -= 1
        held += float(weight[top])
    return top


_STAIRCASE_LEVELS = tuple(
    [round(0.05 * i, 2) for i in range(1, 17)] + [round(0.85 + 0.01 * i, 2) for i in range(1, 15)]
)


def _lower_bound(
    cosine: FloatArray,
    labels: FloatArray,
    weights: FloatArray,
    start: FloatArray,
    value: FloatArray,
    z: float,
) -> FloatArray:
    """Each block's value, `z` binomial standard errors lower (the effective number of
    pairs served from its start: weights differ per set), then the lowest of it and
    every value above it, so the curve stays non-decreasing.

    Why it exists and is off (z = 0) for the shipped scale: a threshold is chosen where
    the measured curve first reaches a target, which sits, more often than not, where
    noise lifted the curve (on the half of the dev sets not fitted on, precision at the
    0.97 target came out 1-2 points lower). One standard error below moved USE's Chinese
    threshold (before strict terms were fitted in) from raw 0.953 to 0.966 over a flat
    stretch of the curve: a quarter of the recall for about a point of precision.
    """
    order = np.argsort(-cosine, kind="stable")
    served_w = np.cumsum(weights[order])
    served_w2 = np.cumsum(weights[order] ** 2)
    served_wy = np.cumsum((weights * labels)[order])
    descending = cosine[order]
    # Last index served from each start (cos >= start): a search in the descending order.
    last = np.searchsorted(-descending, -start, side="right") - 1
    p = served_wy[last] / served_w[last]
    n_effective = served_w[last] ** 2 / np.maximum(served_w2[last], 1e-300)
    lowered = value - z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n_effective)
    bounded: FloatArray = np.minimum.accumulate(np.clip(lowered, 0.0, 1.0)[::-1])[::-1]
    return bounded


def precision_knots(
    cosine: npt.ArrayLike,
    labels: npt.ArrayLike,
    weights: npt.ArrayLike | None = None,
    *,
    z: float = 0.0,
) -> tuple[tuple[float, ...], tuple[float, ...], float, float]:
    """Knots of the `precision` scale, its ceiling and where the ceiling starts.

    The curve is the isotonic precision (`precision_blocks`), each block `z` standard
    errors below the measured precision of serving from its start (`_lower_bound`),
    written as a staircase at fixed levels; from where the precision stops rising
    (`ceiling_start`) the scale is 1.0. Returns (raw, calibrated, ceiling, top_start):
    the knots, the measured precision of serving from the top, and that cosine.
    """
    cos = np.asarray(cosine, dtype=np.float64)
    lab = np.asarray(labels, dtype=np.float64)
    w = np.ones_like(cos) if weights is None else np.asarray(weights, dtype=np.float64)
    if cos.ndim != 1 or cos.shape != lab.shape or cos.shape != w.shape or cos.size == 0:
        raise ValueError("cosine, labels and weights must be non-empty 1-D arrays of one length")
    start, value, weight = precision_blocks(cos, lab, w)
    top = ceiling_start(weight)
    served = cos >= start[top]
    ceiling, top_start = float(np.average(lab[served], weights=w[served])), float(start[top])
    start = start[: top + 1]
    value = _lower_bound(cos, lab, w, start, value[: top + 1], z)
    value[-1] = 1.0
    # Knots: a staircase at fixed levels (every 0.05, every 0.01 from 0.85): each level
    # from the first block start that reaches it. Between two levels the lower holds, so
    # no threshold reads more precise than measured, and the file reads as a table.
    raw, cal = [-1.0], [math.floor(float(value[0]) * 100) / 100]
    for level in _STAIRCASE_LEVELS:
        reached = np.nonzero(value[:-1] >= level - 1e-12)[0]
        if level <= cal[-1] or not len(reached):
            continue
        x = float(start[reached[0]])
        if x - raw[-1] > 2e-6:
            raw += [x - 1e-6, x]
            cal += [cal[-1], level]
        else:
            cal[-1] = level
    x = float(start[-1])
    if x - raw[-1] > 2e-6:
        raw += [x - 1e-6, x]
        cal += [cal[-1], 1.0]
    else:
        cal[-1] = 1.0
    if raw[-1] < 1.0:
        raw.append(1.0)
        cal.append(1.0)
    # Rounding may merge two starts closer than 1e-6: keep the first of equal raw values.
    knots: dict[float, float] = {}
    for x, y in zip(raw, cal, strict=True):
        knots.setdefault(round(x, 6), round(y, 6))
    return (
        tuple(knots),
        tuple(knots.values()),
        round(ceiling, 6),
        round(top_start, 6),
    )


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
    """Fit the gateway scale for one embedder (one curve) from labelled raw cosines."""
    cos = np.asarray(cosine, dtype=np.float64)
    lab = np.asarray(labels, dtype=np.float64)
    w = np.ones_like(cos) if weights is None else np.asarray(weights, dtype=np.float64)
    if method == "identity":
        return Calibration.identity(embedder)
    info = dict(fitted_on or {})
    if method == "precision":
        raw, cal, ceiling, top_start = precision_knots(cos, lab, w)
        info["lower_bound_z"] = 0.0
        info.update({"ceiling": ceiling, "ceiling_from_raw": top_start})
        return Calibration(
            raw=raw, calibrated=cal, embedder=embedder, method=method, fitted_on=info
        )
    if method == "isotonic":
        centre, value, weight = pool_adjacent_violators(cos, lab, w)
    else:
        t, precision, weight_at = threshold_precision(cos, lab, w)
        # Precision of a threshold wiggles where few pairs lie above it; the isotonic
        # fit of that curve is its closest monotone version.
        centre, value, weight = pool_adjacent_violators(t, precision, weight_at)
    raw, cal = knots_from_blocks(centre, value, weight, max_knots=max_knots)
    return Calibration(raw=raw, calibrated=cal, embedder=embedder, method=method, fitted_on=info)


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


def crossings(
    calibration: Calibration, levels: Sequence[float], language: str | None = None
) -> dict[str, float | None]:
    """Raw cosine at which the calibrated scale reaches each level (None: never)."""
    return {f"{level:g}": calibration.raw_threshold(level, language) for level in levels}
