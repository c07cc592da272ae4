"""Fitting a calibration curve (`gateway.embed.calibration.Calibration`) from labelled
pairs: used by `gateway calibrate` (`gateway_tools.evaluation.calibrate`) to write the
shipped curves and a litellm embedder's `semantic.calibration`, never while serving.
How the fit works is described in `gateway/embed/calibration.py`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from gateway.embed.calibration import Calibration, FloatArray, Method


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
