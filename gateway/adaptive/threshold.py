"""The serving threshold that the evidence supports.

The threshold is the lowest bucket floor (down to the policy's floor) at which the
lower confidence bound of the precision of *everything it would then serve* (the
buckets from the top down to that one, each weighted by its traffic) is at or above
the target. (Not "walk down until the first failure": the first steps down add few
verdicts, so their bound is loose even where the traffic is very precise; the bound
is on the whole served set at the chosen point, which is what the target is about.)

The served set has two parts. The buckets from the static default up are served
anyway: they enter at their estimate (the calibration, moved by the audits of served
hits, which are few: the audit rate is a small share of hits, by default none). The
buckets below it are what adapting adds: they enter at their own lower bound, and that
bound must reach the target by itself, so a sliver of barely judged traffic cannot ride
on the served region's estimate. (Bounding the mixture as one proportion instead, with
Kish's effective sample size, let the unaudited top bucket's four prior verdicts decide
it: in simulation no stream, however precise, moved the threshold.) The threshold stops
only at buckets that saw traffic: below the lowest evidence there is none to serve on.

Each bucket's precision is estimated from its verdicts with a prior centred on the
calibrated scale itself (the bucket's similarity is what the dev sets measured there),
worth `prior_strength` verdicts: with no evidence the estimate is the
static calibration, so the threshold stays at the static default; evidence that this
deployment's traffic is more precise than the dev sets moves it down, evidence that it
is less precise keeps it there (never stricter than the static default, never looser
than the policy's floor). It is recomputed from the counters on every change, so a
false hit found by an audit tightens at once. One verdict's worth is enough for that:
the bound already pays for few verdicts, and a stronger prior (4 was tried) mostly
charged every added bucket for its calibration below the target a second time (in
simulation it cost BQ's stream a fifth of the recall it reaches; no set's precision
changed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gateway.adaptive.buckets import BucketStats, bucket_floor, bucket_of

# One-sided 95 %: the precision is at least the bound with 95 % confidence.
Z_ONE_SIDED_95 = 1.6449
DEFAULT_PRIOR_STRENGTH = 1.0


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
    stats: BucketStats,
    lowest: int,
    prior_strength: float = DEFAULT_PRIOR_STRENGTH,
    accepted_from: int | None = None,
) -> tuple[float, float, float] | None:
    """(precision, lower bound, verdicts) of serving buckets `lowest`..top, weighted by
    traffic; None when those buckets saw no traffic.

    With `accepted_from` (the static default's bucket) above `lowest`, the buckets from
    there up, which the static default serves anyway, enter the bound at their estimate
    (the calibration, moved by audits), and the buckets below it, which only adapting
    serves, at their lower bound; the bound is the lower of that mixture's and the
    added buckets' own: the evidence must carry what it adds."""
    weights = stats.traffic[lowest:]
    total = sum(weights)
    if total <= 0:
        return None
    split = lowest if accepted_from is None else min(max(accepted_from, lowest), stats.size)
    added = _Stratum.over(stats, lowest, split, prior_strength)
    kept = _Stratum.over(stats, split, stats.size, prior_strength)
    return _combine(added, kept)


def _combine(added: _Stratum, kept: _Stratum) -> tuple[float, float, float] | None:
    total = added.traffic + kept.traffic
    if total <= 0:
        return None
    if added.traffic <= 0:
        bound = wilson_lower_bound(kept.mean, kept.samples, Z_ONE_SIDED_95)
    else:
        # What adapting adds must be at least the target on its own evidence (a sliver
        # of traffic must not ride on the static region's estimate), and the whole
        # served set, with that part at its bound, too.
        added_bound = wilson_lower_bound(added.mean, added.samples, Z_ONE_SIDED_95)
        whole_bound = (added.traffic * added_bound + kept.traffic * kept.mean) / total
        bound = min(added_bound, whole_bound)
    mean = (added.traffic * added.mean + kept.traffic * kept.mean) / total
    return mean, bound, added.judged + kept.judged


@dataclass(slots=True)
class _Stratum:
    """Buckets pooled by traffic: sums that grow one bucket at a time."""

    prior_strength: float
    traffic: float = 0.0
    weighted_precision: float = 0.0  # sum of traffic x estimate
    weighted_variance: float = 0.0  # sum of traffic^2 / verdicts (Kish)
    judged: float = 0.0

    @classmethod
    def over(cls, stats: BucketStats, start: int, stop: int, prior_strength: float) -> _Stratum:
        stratum = cls(prior_strength)
        for index in range(start, stop):
            stratum.add(stats, index)
        return stratum

    def add(self, stats: BucketStats, index: int) -> None:
        weight = stats.traffic[index]
        if weight <= 0:
            return
        p, n = bucket_precision(stats, index, self.prior_strength)
        self.traffic += weight
        self.weighted_precision += weight * p
        self.weighted_variance += weight * weight / n
        self.judged += stats.judged[index]

    @property
    def mean(self) -> float:
        """The traffic-weighted precision estimate."""
        return self.weighted_precision / self.traffic if self.traffic > 0 else 0.0

    @property
    def samples(self) -> float:
        # The traffic-weighted mixture has the variance of a proportion over this many
        # verdicts (Kish's effective sample size); Wilson's bound stays honest near 1.0,
        # where most of the buckets that matter are.
        if self.weighted_variance <= 0:
            return 0.0
        return self.traffic * self.traffic / self.weighted_variance


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
    kept = _Stratum.over(stats, start, stats.size, prior_strength)
    best = _combine(_Stratum(prior_strength), kept)
    added = _Stratum(prior_strength)  # grows one bucket down at a time
    index = start - 1
    while index >= 0 and bucket_floor(index, stats.floor, stats.width) >= floor - 1e-9:
        # Only down to a bucket that saw traffic: below the lowest evidence the bound
        # would be the one above it, and serving there would rest on no verdict at all.
        if stats.traffic[index] > 0:
            added.add(stats, index)
            candidate = _combine(added, kept)
            if candidate is not None and candidate[1] >= target_precision:
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
