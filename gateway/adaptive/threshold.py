"""The serving threshold that the evidence supports.

The threshold is the lowest bucket floor (down to the policy's floor, never above the
static default) at which the one-sided 95 % lower bound of the precision of *everything
it would then serve*, as its traffic sees it, is at or above the target. The served set
is every bucket from that floor to the top, and its precision is the traffic-weighted
mean of the precisions of its parts (a stratified estimate):

- each bucket below the static default is a stratum of its own, weighted by its share
  of the served set's traffic (`BucketStats.traffic` counts every candidate that
  reached the decision, served or not) and measured by its own verdicts (shadow
  judgments while it was below the threshold, audits once served), with its prior;
- the region at and above the static default is one stratum, weighted by its traffic
  and measured by its audits pooled. Audits sample the served hits at one rate,
  whatever their similarity, so they are a proportional sample of that region's
  traffic, and their pooled share is already its traffic-weighted precision. With no
  audit (audits are off by default) its precision is taken as the static default's
  own level, with no variance: the static threshold is on the calibrated scale, whose
  value is the precision the dev sets measured for serving from there; that region is
  what the gateway serves without any evidence, at exactly that calibrated level, and
  adapting changes nothing about it. Moving down is then judged on what the move adds,
  as it would be served next to it. Without this, a region with no verdicts would
  count as unknown, and its traffic (most of what is served) would sink every bound.
  Once audits exist they replace the assumption, so a served region that is worse than
  its calibration (a false hit found by an audit) tightens at once.

The lower bound is the normal approximation of the stratified estimate: the mean minus
z times the square root of sum(w_b^2 var_b), each stratum's variance the binomial one
of its verdicts with its prior (which keeps it off 0 and 1). The audited region's
estimate is capped at its calibrated level: the judge-error correction takes a bucket's
current estimate as its prior, and near 1 that pins it there (QQP's top bucket read
0.999 from 200 audits against a true 0.933 with a 2 % judge error), and that region
carries most of the served traffic. Two alternatives measured worse on `gateway eval
adaptive`: an Agresti-Coull (Wilson-style) variance per stratum adds margin to each of
twenty strata of a few dozen verdicts and blocked moves (BQ at 0.97 fell from 0.557 to
0.181 of the best static recall); a weighted sum of per-bucket lower bounds (with or
without Bonferroni) adds the margins linearly and is stricter still.

Weighting by traffic, rather than pooling every verdict, is what the target is on: the
precision of what is served. Verdicts come at two rates (every sampled miss below the
threshold is judged, only a few % of the served hits are audited), so a pool of them
leans on the buckets below the threshold, the less precise ones, and understates what
is served.

Two guards keep a move from resting on too little:

- the threshold stops only at a bucket with verdicts of its own: below the lowest
  evidence there is none to serve on;
- the buckets a move adds (below the static default) must hold at least
  `min_added_verdicts(target)` verdicts between them, the fewest with which even a
  spotless record could show the target on its own (z^2 t / (1 - t): 88 at 0.97, 51 at
  0.95, 31 at 0.92). A sliver of unjudged or barely judged traffic below the static
  default never rides on the region above it.

The bound must hold at the chosen floor, not at every floor above it. The first steps
down add few verdicts and their bound is loose even where the traffic is very precise;
requiring every step to hold would let the narrowest step decide ("walk down until the
first failure"). What is served is the set at the chosen floor, and that is what the
bound is on.

Each bucket's verdicts come with a prior centred on the calibrated scale itself (the
bucket's similarity is what the dev sets measured there), worth `prior_strength`
verdicts; the static default's region has its prior at the static default's level.
Verdicts are counted as `BucketStats` holds them: already corrected for the judge's
error rates where those are known (`judge_error`). The threshold is never stricter than
the static default, never looser than the policy's floor, and is recomputed from the
counters on every change, so a false hit found by an audit tightens at once.
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


@dataclass(frozen=True, slots=True)
class ServedPrecision:
    """The traffic-weighted precision of serving a range of buckets, with its one-sided
    95 % bounds (the two together: a two-sided 90 % interval)."""

    precision: float
    lower_bound: float
    upper_bound: float
    judged: float  # the verdicts behind it, without the priors


def bucket_precision(stats: BucketStats, index: int, prior_strength: float) -> tuple[float, float]:
    """(estimate, verdicts with the prior) of bucket `index`'s precision."""
    n = stats.judged[index] + prior_strength
    estimate = (stats.judged_same[index] + _prior_mean(stats, index) * prior_strength) / n
    return estimate, n


def min_added_verdicts(target_precision: float) -> float:
    """The fewest verdicts whose one-sided 95 % Wilson bound can reach the target (all
    of them agreeing): what the buckets a move adds must hold."""
    if target_precision >= 1.0:
        return math.inf
    return Z_ONE_SIDED_95**2 * target_precision / (1.0 - target_precision)


def served_precision(
    stats: BucketStats,
    lowest: int,
    static_threshold: float,
    prior_strength: float = DEFAULT_PRIOR_STRENGTH,
) -> ServedPrecision | None:
    """The precision of serving buckets `lowest`..top as their traffic sees it, the
    region from `static_threshold` up as one stratum; None when they saw no traffic."""
    start = _static_bucket(stats, static_threshold)
    strata = _Strata(prior_strength)
    strata.add_static_region(stats, max(start, lowest), static_threshold)
    for index in range(max(0, lowest), start):
        strata.add_bucket(stats, index)
    return strata.estimate()


def _static_bucket(stats: BucketStats, static_threshold: float) -> int:
    """The first bucket of the static default's region (`size` when above 1.0)."""
    if static_threshold > 1.0:
        return stats.size
    index = bucket_of(static_threshold, stats.floor, stats.width)
    return 0 if index is None else index


@dataclass(slots=True)
class _Strata:
    """Traffic-weighted strata of a served range; grows one bucket down at a time."""

    prior_strength: float
    traffic: float = 0.0  # the served range's traffic
    weighted: float = 0.0  # sum of traffic x precision
    weighted_variance: float = 0.0  # sum of traffic^2 x variance
    judged: float = 0.0  # verdicts, without the priors

    def add_static_region(self, stats: BucketStats, start: int, static_threshold: float) -> None:
        traffic = sum(stats.traffic[start:])
        if traffic <= 0:
            return
        judged = sum(stats.judged[start:])
        level = min(1.0, static_threshold)
        if judged <= 0:
            # Served at the calibrated level with no evidence either way: that level,
            # no variance (see the module's docstring).
            self._add(traffic, level, 0.0)
            return
        same = sum(stats.judged_same[start:]) + level * self.prior_strength
        precision, variance = _stratum(same, judged + self.prior_strength)
        self._add(traffic, min(precision, level), variance)
        self.judged += judged

    def add_bucket(self, stats: BucketStats, index: int) -> None:
        traffic = stats.traffic[index]
        if traffic <= 0:
            return  # nothing would be served from this bucket
        estimate, n = bucket_precision(stats, index, self.prior_strength)
        self._add(traffic, *_stratum(estimate * n, n))
        self.judged += stats.judged[index]

    def _add(self, traffic: float, precision: float, variance: float) -> None:
        self.traffic += traffic
        self.weighted += traffic * precision
        self.weighted_variance += traffic * traffic * variance

    def estimate(self) -> ServedPrecision | None:
        if self.traffic <= 0:
            return None
        precision = min(1.0, max(0.0, self.weighted / self.traffic))
        margin = Z_ONE_SIDED_95 * math.sqrt(self.weighted_variance) / self.traffic
        return ServedPrecision(
            precision,
            max(0.0, precision - margin),
            min(1.0, precision + margin),
            self.judged,
        )


def _stratum(same: float, verdicts: float) -> tuple[float, float]:
    """(precision, binomial variance of it) of a stratum of `verdicts` (priors
    included, which keep it off 0 and 1), `same` of them agreeing."""
    precision = min(1.0, max(0.0, same / verdicts))
    return precision, precision * (1 - precision) / verdicts


def _prior_mean(stats: BucketStats, index: int) -> float:
    return min(1.0, bucket_floor(index, stats.floor, stats.width) + stats.width / 2)


def _wilson(proportion: float, samples: float, z: float) -> tuple[float, float]:
    z2 = z * z
    centre = proportion + z2 / (2 * samples)
    margin = z * math.sqrt(proportion * (1 - proportion) / samples + z2 / (4 * samples**2))
    scale = 1 + z2 / samples
    return (centre - margin) / scale, (centre + margin) / scale


def wilson_lower_bound(proportion: float, samples: float, z: float) -> float:
    if samples <= 0:
        return 0.0
    return max(0.0, _wilson(proportion, samples, z)[0])


def wilson_upper_bound(proportion: float, samples: float, z: float) -> float:
    if samples <= 0:
        return 1.0
    return min(1.0, _wilson(proportion, samples, z)[1])


def choose_threshold(
    stats: BucketStats,
    target_precision: float,
    static_threshold: float,
    floor: float,
    prior_strength: float = DEFAULT_PRIOR_STRENGTH,
) -> OperatingPoint:
    """The lowest bucket floor in [floor, static_threshold] at which the lower bound of
    the traffic-weighted served precision is >= the target (the static threshold when
    none is)."""
    floor = max(floor, stats.floor)
    start = bucket_of(min(static_threshold, 1.0), stats.floor, stats.width)
    if start is None or static_threshold <= floor:
        threshold = max(floor, static_threshold)
        lowest = bucket_of(min(threshold, 1.0), stats.floor, stats.width) or 0
        return _point(threshold, served_precision(stats, lowest, static_threshold, prior_strength))
    strata = _Strata(prior_strength)  # grows one bucket down at a time
    strata.add_static_region(stats, start, static_threshold)
    best_index, best = start, strata.estimate()
    served_anyway = strata.judged  # verdicts the static default's region holds
    needed = min_added_verdicts(target_precision)
    index = start - 1
    while index >= 0 and bucket_floor(index, stats.floor, stats.width) >= floor - 1e-9:
        strata.add_bucket(stats, index)
        if stats.judged[index] > 0 and strata.judged - served_anyway >= needed - 1e-9:
            candidate = strata.estimate()
            if candidate is not None and candidate.lower_bound >= target_precision:
                best_index, best = index, candidate
        index -= 1
    if best_index == start:
        return _point(static_threshold, best)
    return _point(bucket_floor(best_index, stats.floor, stats.width), best)


def _point(threshold: float, estimate: ServedPrecision | None) -> OperatingPoint:
    if estimate is None:
        return OperatingPoint(threshold, None, None, 0.0)
    return OperatingPoint(
        threshold,
        round(estimate.precision, 4),
        round(estimate.lower_bound, 4),
        estimate.judged,
    )
