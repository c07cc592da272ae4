"""The serving threshold that the evidence supports.

The threshold is the lowest bucket floor (down to the policy's floor, never above the
static default) at which the one-sided 95 % lower bound of the precision of *everything
it would then serve* is at or above the target. The served set is every bucket from
that floor to the top, and its precision is estimated from all their verdicts pooled:
shadow judgments of the misses below the serving threshold and audits of the hits above
it, each verdict counted once, with each bucket's prior (below) added. What adapting adds
need not reach the target on its own: a step down that adds buckets a little less
precise than the target is taken when the whole served set, with them, still keeps the
bound at the target (the target is on what is served, not on any one bucket).

Pooling the verdicts, rather than weighting each bucket's estimate by its traffic,
keeps the bound on the evidence: the traffic of a bucket grows once it is served, and
its verdicts then stop (a hit is judged only when audited), so a traffic-weighted bound
would loosen every bucket the threshold moved to until it moved back, and with no
audits (the default) the static default's region has no verdicts at all, so its
traffic would sink any traffic-weighted bound. The price: the verdicts are sampled at
two rates (shadow judgments of misses, audits of hits), and where the served region is
audited less than the misses are judged, the pool leans on the buckets below the
threshold, the less precise ones. The bound is then conservative: in simulation (every
miss judged, 5 % of hits audited) it moved about as far as requiring the added buckets
to reach the target alone did.

Two guards keep a move from resting on too little:

- the threshold stops only at a bucket with verdicts of its own: below the lowest
  evidence there is none to serve on;
- the buckets a move adds (below the static default) must hold at least
  `min_added_verdicts(target)` verdicts between them, the fewest with which even a
  spotless record could show the target on its own (z^2 t / (1 - t): 88 at 0.97, 51 at
  0.95, 31 at 0.92), the least the rule moved on while those buckets had to reach the
  target by themselves. A sliver of unjudged or barely judged traffic below the static
  default never rides on the audits of the region above it.

The bound must hold at the chosen floor, not at every floor above it. The first steps
down add few verdicts and their bound is loose even where the traffic is very precise;
requiring every step to hold would let the narrowest step decide ("walk down until the
first failure"). What is served is the set at the chosen floor, and that is what the
bound is on. The served sets of the floors are nested and share most of their
verdicts, so taking the lowest that passes costs little of the 95 %.

Each bucket's verdicts come with a prior centred on the calibrated scale itself (the
bucket's similarity is what the dev sets measured there), worth `prior_strength`
verdicts: with no evidence the estimate is the static calibration, so the threshold
stays at the static default; evidence that this deployment's traffic is more precise
than the dev sets moves it down, evidence that it is less precise keeps it there (never
stricter than the static default, never looser than the policy's floor). It is
recomputed from the counters on every change, so a false hit found by an audit tightens
at once. One verdict's worth is enough for that: the bound already pays for few
verdicts, and a stronger prior (4 was tried) charged every added bucket for its
calibration below the target a second time.
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
    """The pooled precision of serving a range of buckets, with its one-sided 95 %
    bounds (the two together: a two-sided 90 % interval)."""

    precision: float
    lower_bound: float
    upper_bound: float
    judged: float  # the verdicts pooled, without the priors


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
    stats: BucketStats, lowest: int, prior_strength: float = DEFAULT_PRIOR_STRENGTH
) -> ServedPrecision | None:
    """The precision of serving buckets `lowest`..top, from their verdicts pooled;
    None when those buckets saw neither traffic nor verdicts."""
    pool = _Pool(prior_strength)
    for index in range(max(0, lowest), stats.size):
        pool.add(stats, index)
    return pool.estimate()


@dataclass(slots=True)
class _Pool:
    """The verdicts of a range of buckets, each bucket with its prior; grows one bucket
    at a time."""

    prior_strength: float
    same: float = 0.0  # agreeing verdicts, priors included
    verdicts: float = 0.0  # verdicts, priors included
    judged: float = 0.0  # verdicts, without the priors

    def add(self, stats: BucketStats, index: int) -> None:
        if stats.traffic[index] <= 0 and stats.judged[index] <= 0:
            return  # nothing would be served from this bucket: no prior either
        self.same += stats.judged_same[index] + _prior_mean(stats, index) * self.prior_strength
        self.verdicts += stats.judged[index] + self.prior_strength
        self.judged += stats.judged[index]

    def estimate(self) -> ServedPrecision | None:
        if self.verdicts <= 0:
            return None
        proportion = min(1.0, max(0.0, self.same / self.verdicts))
        return ServedPrecision(
            proportion,
            wilson_lower_bound(proportion, self.verdicts, Z_ONE_SIDED_95),
            wilson_upper_bound(proportion, self.verdicts, Z_ONE_SIDED_95),
            self.judged,
        )


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
    """The lowest bucket floor in [floor, static_threshold] at which the pooled served
    precision's lower bound is >= the target (the static threshold when none is)."""
    floor = max(floor, stats.floor)
    start = bucket_of(min(static_threshold, 1.0), stats.floor, stats.width)
    if start is None or static_threshold <= floor:
        threshold = max(floor, static_threshold)
        lowest = bucket_of(min(threshold, 1.0), stats.floor, stats.width) or 0
        return _point(threshold, served_precision(stats, lowest, prior_strength))
    pool = _Pool(prior_strength)  # grows one bucket down at a time
    for index in range(start, stats.size):
        pool.add(stats, index)
    best_index, best = start, pool.estimate()
    served_anyway = pool.judged  # verdicts the static default's region holds
    needed = min_added_verdicts(target_precision)
    index = start - 1
    while index >= 0 and bucket_floor(index, stats.floor, stats.width) >= floor - 1e-9:
        pool.add(stats, index)
        if stats.judged[index] > 0 and pool.judged - served_anyway >= needed - 1e-9:
            candidate = pool.estimate()
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
