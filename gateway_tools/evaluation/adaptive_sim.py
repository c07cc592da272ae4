"""The adaptive operating point replayed over a labelled traffic stream (pure, seeded).

Each stream pair is a semantic candidate as the pipeline meets it (`adaptive_signals`):
a calibrated similarity, whether it passed the checks, and the truth. Per pair, in
stream order, as the gateway does it:

- it passed the checks and its similarity is at or above the current threshold of its
  scope (the new request's language): served; with `audit_rate` the served hit is
  audited (a judge verdict);
- it passed the checks, is below the threshold and at or above the floor: a miss; with
  `shadow_rate` a shadow judgment (a judge verdict) says whether it would have served;
- every pair that passed the checks (from the floor up) counts as traffic of its bucket.

A verdict is the label, flipped with probability `judge_error` (in either direction);
with `correct_judge_errors` the statistics count it as `JudgeErrors.corrected` with the
judge's rates known (what the gateway estimates from exact repeats and audits). The
threshold is `choose_threshold` on the scope's counters, recomputed after every verdict
and every `recompute_every` pairs of traffic. The static default and every static
threshold chosen in hindsight are measured on the same stream.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from gateway.adaptive.buckets import DEFAULT_WIDTH, BucketStats, bucket_of
from gateway.adaptive.judge_error import JudgeErrors
from gateway.adaptive.threshold import DEFAULT_PRIOR_STRENGTH, bucket_precision, choose_threshold


@dataclass(frozen=True, slots=True)
class StreamPair:
    similarity: float  # calibrated, in the new request's language
    passes: bool  # passed every check: only the threshold decides whether it is served
    duplicate: bool  # the label: the stored answer serves the new request
    language: str
    half: str  # "a" or "b" (`pairs.in_half`): tune on one, report the other


# A set shorter than this is replayed (each pass in a new order) until the stream is
# this long. A 95 % bound at 0.97 needs about 90 agreeing verdicts in the buckets it
# adds, and the sets hold few pairs there (BQ: 55 that pass the checks in [0.90, 0.97)
# per pass, the probe suite 66 below 0.97): with one pass the learning is the whole
# stream; with ten and more, the stream shows the operating point it learns.
DEFAULT_MIN_STREAM = 100_000


@dataclass(frozen=True, slots=True)
class SimulationSettings:
    target_precision: float = 0.97
    static_threshold: float = 0.97  # the policy's accept threshold
    floor: float = 0.80  # never serve below it; shadow judgments from here up
    # Share of checked misses in [floor, threshold) judged: all of them by default, as
    # the local judge (answer agreement) costs no model call.
    shadow_rate: float = 1.0
    audit_rate: float = 0.05  # share of served semantic hits judged
    judge_error: float = 0.0  # P(verdict != label), either direction
    correct_judge_errors: bool = True
    # One statistics scope for the stream (a tenant), or one per language of the new
    # request (the gateway splits a tenant by language where traffic allows).
    per_language: bool = False
    seed: int = 16
    recompute_every: int = 50
    bucket_width: float = DEFAULT_WIDTH
    prior_strength: float = DEFAULT_PRIOR_STRENGTH
    timeline_points: int = 200

    def __post_init__(self) -> None:
        for name in ("shadow_rate", "audit_rate"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in [0, 1]")
        if not 0 <= self.judge_error < 0.5:
            raise ValueError("judge_error must be in [0, 0.5)")
        if not 0 < self.floor <= self.static_threshold <= 1:
            raise ValueError("need 0 < floor <= static_threshold <= 1")
        if not 0.5 < self.target_precision <= 1:
            raise ValueError("target_precision must be in (0.5, 1]")


@dataclass(frozen=True, slots=True)
class TimelinePoint:
    position: int  # pairs of the stream seen so far
    thresholds: dict[str, float]  # per scope ("all", or per language)
    precision: float  # served precision so far
    recall: float  # duplicates served / duplicates seen so far
    static_precision: float
    static_recall: float


@dataclass
class Tally:
    served: int = 0
    correct: int = 0

    def precision(self) -> float:
        return self.correct / self.served if self.served else 1.0


@dataclass
class SimulationRun:
    pairs: int
    duplicates: int
    adaptive: Tally
    static: Tally
    thresholds: dict[str, float]
    shadow_judgments: int
    audits: int
    wrong_verdicts: int
    timeline: list[TimelinePoint] = field(default_factory=list)

    def recall(self, tally: Tally) -> float:
        return tally.correct / self.duplicates if self.duplicates else 0.0


@dataclass(frozen=True, slots=True)
class StaticPoint:
    threshold: float
    served: int
    precision: float
    recall: float


def build_stream(pairs: Sequence[StreamPair], seed: int, min_length: int = 0) -> list[StreamPair]:
    """The pairs in a seeded random order; a set shorter than `min_length` is replayed
    (each pass in a new order) until the stream is that long: a small set is then
    repeated traffic, as the same questions come back in a deployment."""
    rng = random.Random(seed)
    stream: list[StreamPair] = []
    while pairs and (not stream or len(stream) < min_length):
        batch = list(pairs)
        rng.shuffle(batch)
        stream.extend(batch)
    return stream


def simulate(stream: Sequence[StreamPair], settings: SimulationSettings) -> SimulationRun:
    rng = random.Random(settings.seed + 1)  # the order is the stream's; coins are ours
    errors = JudgeErrors(settings.judge_error, settings.judge_error)
    correcting = settings.correct_judge_errors and settings.judge_error > 0
    stats: dict[str, BucketStats] = {}
    thresholds: dict[str, float] = {}
    adaptive, static = Tally(), Tally()
    run = SimulationRun(0, 0, adaptive, static, thresholds, 0, 0, 0)
    every = max(1, len(stream) // max(1, settings.timeline_points))
    since_recompute = 0

    def recompute(scope: str) -> None:
        thresholds[scope] = choose_threshold(
            stats[scope],
            settings.target_precision,
            settings.static_threshold,
            settings.floor,
            settings.prior_strength,
        ).threshold

    for position, pair in enumerate(stream, start=1):
        run.pairs += 1
        run.duplicates += pair.duplicate
        if pair.passes and pair.similarity >= settings.static_threshold:
            static.served += 1
            static.correct += pair.duplicate
        if pair.passes and pair.similarity >= settings.floor:
            scope = pair.language if settings.per_language else "all"
            if scope not in stats:
                stats[scope] = BucketStats(floor=settings.floor, width=settings.bucket_width)
                thresholds[scope] = settings.static_threshold
            scope_stats = stats[scope]
            scope_stats.add_traffic(pair.similarity)
            served = pair.similarity >= thresholds[scope]
            if served:
                adaptive.served += 1
                adaptive.correct += pair.duplicate
            rate = settings.audit_rate if served else settings.shadow_rate
            if rng.random() < rate:
                run.audits += served
                run.shadow_judgments += not served
                wrong = rng.random() < settings.judge_error
                run.wrong_verdicts += wrong
                says_same = pair.duplicate != wrong
                same = float(says_same)
                if correcting:
                    same = errors.corrected(says_same, _estimate(scope_stats, pair, settings))
                scope_stats.add_verdict(pair.similarity, same)
                recompute(scope)
            since_recompute += 1
            if since_recompute >= settings.recompute_every:
                since_recompute = 0
                for name in stats:
                    recompute(name)
        if position % every == 0 or position == len(stream):
            run.timeline.append(
                TimelinePoint(
                    position,
                    dict(thresholds),
                    round(adaptive.precision(), 4),
                    round(run.recall(adaptive), 4),
                    round(static.precision(), 4),
                    round(run.recall(static), 4),
                )
            )
    return run


def _estimate(stats: BucketStats, pair: StreamPair, settings: SimulationSettings) -> float:
    """The bucket's current precision estimate: the prior of a corrected verdict."""
    index = bucket_of(pair.similarity, stats.floor, stats.width)
    assert index is not None  # the caller counts only pairs from the floor up
    return bucket_precision(stats, index, settings.prior_strength)[0]


def static_curve(stream: Sequence[StreamPair]) -> list[StaticPoint]:
    """Every static threshold on the stream (each distinct similarity of a pair that
    passed the checks): what serving from there over the whole stream would serve."""
    duplicates = sum(p.duplicate for p in stream)
    checked = sorted((p for p in stream if p.passes), key=lambda p: -p.similarity)
    points: list[StaticPoint] = []
    correct = 0
    for index, pair in enumerate(checked):
        served = index + 1
        correct += pair.duplicate
        last_of_tie = index + 1 == len(checked) or checked[index + 1].similarity < pair.similarity
        if last_of_tie:  # a threshold serves every pair of a tie or none
            points.append(
                StaticPoint(
                    pair.similarity,
                    served,
                    correct / served,
                    correct / duplicates if duplicates else 0.0,
                )
            )
    return points


def best_static(curve: Sequence[StaticPoint], min_precision: float) -> StaticPoint | None:
    """The static threshold with the highest recall at precision >= `min_precision`
    (chosen in hindsight, on the whole stream)."""
    eligible = [p for p in curve if p.precision >= min_precision - 1e-12]
    return max(eligible, key=lambda p: (p.recall, p.threshold), default=None)
