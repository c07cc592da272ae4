"""The serving threshold that the evidence supports.

The threshold is the lowest bucket floor (down to the policy's floor) at which the
lower confidence bound of the precision of *everything it would then serve* (the
buckets from the top down to that one, each weighted by its traffic) is at or above
the target. (Not "walk down until the first failure": the first steps down add few
verdicts, so their bound is loose even where the traffic is very precise; the bound
is on the whole served set at the chosen point, which is what the target is about.)

Each bucket's precision is estimated from its verdicts with a prior centred on the
calibrated scale itself (the bucket's similarity is what the dev sets measured there),
worth `prior_strength` verdicts: with no evidence the estimate is the
static calibration, so the threshold stays at the static default; evidence that this
deployment's traffic is more precise than the dev sets moves it down, evidence that it
is less precise keeps it there (never stricter than the static default, never looser
than the policy's floor). It is recomputed from the counters on every change, so a
false hit found by an audit tightens at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gateway.adaptive.buckets import BucketStats, bucket_floor, bucket_of

# One-sided 95 %: the precision is at least the bound with 95 % confidence.
Z_ONE_SIDED_95 = 1.6449
DEFAULT_PRIOR_STRENGTH = 4.0


@dataclass(frozen=True, slots=True)
class OperatingPoint:
    threshold: float  # serve at or above this calibrated similarity
    precision: float | None  # estimated precision of what it serves (None: no traffic)
    lower_bound: float | None  # its one-sided 95 % lower bound
    judged: float  # verdicts behind the estimate (buckets at or above the threshold)


def bucket_precision(stats: BucketStats, index: int, prior_strength: float) -> tuple[float, float]:
    """(estimate, effective sample size) of bucket `index`'s precision."""
    prior_mean = min(1.0, bucket_floor(index, stats.floor, stats.width) + stats.width / 2)
    n = stats.judged[index] + prior_strength
    estimate = (stats.judged_same[index] + prior_mean * prior_strength) / n
    return estimate, n


def served_precision(
    stats: BucketStats, lowest: int, prior_strength: float = DEFAULT_PRIOR_STRENGTH
) -> tuple[float, float, float] | None:
    """(precision, lower bound, verdicts) of serving buckets `lowest`..top, weighted by
    traffic; None when those buckets saw no traffic."""
    weights = stats.traffic[lowest:]
    total = sum(weights)
    if total <= 0:
        return None
    mean = 0.0
    inverse_n_eff = 0.0
    judged = 0.0
    for offset, weight in enumerate(weights):
        if weight <= 0:
            continue
        index = lowest + offset
        share = weight / total
        p, n = bucket_precision(stats, index, prior_strength)
        mean += share * p
        inverse_n_eff += share * share / n
        judged += stats.judged[index]
    # The traffic-weighted mixture has the variance of a proportion over this many
    # verdicts (Kish's effective sample size); Wilson's bound stays honest near 1.0,
    # where most of the buckets that matter are.
    bound = wilson_lower_bound(mean, 1.0 / inverse_n_eff, Z_ONE_SIDED_95)
    return mean, bound, judged


def wilson_lower_bound(proportion: float, samples: float, z: float) -> float:
    if samples <= 0:
        return 0.0
    z2 = z * z
    centre = proportion + z2 / (2 * samples)
    margin = z * math.sqrt(proportion * (1 - proportion) / samples + z2 / (4 * samples**2))
    return max(0.0, (centre - margin) / (1 + z2 / samples))


def choose_threshold(
    stats: BucketStats,
    target_precision: float,
    static_threshold: float,
    floor: float,
    prior_strength: float = DEFAULT_PRIOR_STRENGTH,
) -> OperatingPoint:
    """The lowest threshold in [floor, static_threshold] at which the served
    precision's lower bound is >= the target (the static one when none is)."""
    floor = max(floor, stats.floor)
    start = bucket_of(min(static_threshold, 1.0), stats.floor, stats.width)
    if start is None or static_threshold <= floor:
        current = served_precision(stats, 0, prior_strength)
        return _point(max(floor, static_threshold), current)
    best_index = start
    best = served_precision(stats, start, prior_strength)
    index = start - 1
    while index >= 0 and bucket_floor(index, stats.floor, stats.width) >= floor - 1e-9:
        candidate = served_precision(stats, index, prior_strength)
        if candidate is None:
            index -= 1
            continue
        if candidate[1] >= target_precision:
            best_index, best = index, candidate
        index -= 1
    if best_index == start:
        return _point(static_threshold, best)
    return _point(bucket_floor(best_index, stats.floor, stats.width), best)


def _point(threshold: float, estimate: tuple[float, float, float] | None) -> OperatingPoint:
    if estimate is None:
        return OperatingPoint(threshold, None, None, 0.0)
    precision, bound, judged = estimate
    return OperatingPoint(threshold, round(precision, 4), round(bound, 4), judged)
