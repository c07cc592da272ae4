"""The adaptive operating point from bucket counters: it stays at the static default
without evidence, moves down only as far as the evidence bounds the served precision,
and moves back up at once when verdicts say the served set is worse."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from gateway.adaptive.buckets import BucketStats, bucket_count, bucket_floor, bucket_of
from gateway.adaptive.judge_error import JudgeErrorEstimate, JudgeErrors
from gateway.adaptive.threshold import choose_threshold, min_added_verdicts, served_precision

TARGET = 0.97
STATIC = 0.97
FLOOR = 0.80


def _traffic(truth: Callable[[float], float], requests: int, judged_share: float) -> BucketStats:
    rng = random.Random(7)
    stats = BucketStats(floor=FLOOR)
    for _ in range(requests):
        similarity = rng.uniform(FLOOR, 1.0)
        stats.add_traffic(similarity)
        if rng.random() < judged_share:
            stats.add_verdict(similarity, float(rng.random() < truth(similarity)))
    return stats


def test_buckets_cover_floor_to_one() -> None:
    assert bucket_count(0.80) == 20
    assert bucket_of(0.7999, 0.80) is None
    assert bucket_of(0.80, 0.80) == 0
    assert bucket_of(1.0, 0.80) == 19
    assert bucket_of(0.955, 0.80) == 15
    assert bucket_floor(15, 0.80) == pytest.approx(0.95)


def test_without_evidence_the_static_default_holds() -> None:
    point = choose_threshold(BucketStats(floor=FLOOR), TARGET, STATIC, FLOOR)
    assert point.threshold == STATIC and point.precision is None


def test_precise_traffic_moves_the_threshold_down() -> None:
    point = choose_threshold(_traffic(lambda _: 0.995, 5000, 0.2), TARGET, STATIC, FLOOR)
    assert point.threshold == pytest.approx(FLOOR)
    assert point.lower_bound is not None and point.lower_bound >= TARGET


def test_traffic_as_precise_as_the_calibration_keeps_it() -> None:
    # The calibrated scale says what the dev sets measured: below 0.97, below target.
    point = choose_threshold(_traffic(lambda s: s, 5000, 0.2), TARGET, STATIC, FLOOR)
    assert point.threshold == STATIC


def test_imprecise_traffic_never_goes_stricter_than_static() -> None:
    point = choose_threshold(_traffic(lambda _: 0.90, 5000, 0.2), TARGET, STATIC, FLOOR)
    assert point.threshold == STATIC
    assert point.precision is not None and point.precision < TARGET


def test_it_stops_above_a_region_of_wrong_answers() -> None:
    point = choose_threshold(
        _traffic(lambda s: 0.999 if s >= 0.88 else 0.6, 8000, 0.25), TARGET, STATIC, FLOOR
    )
    assert 0.84 <= point.threshold <= 0.90


def test_false_hits_found_by_audits_tighten_at_once() -> None:
    stats = _traffic(lambda _: 0.995, 3000, 0.2)
    assert choose_threshold(stats, TARGET, STATIC, FLOOR).threshold < 0.9
    for _ in range(60):  # audits of served hits in the low buckets: wrong answers
        stats.add_verdict(0.81, 0.0)
        stats.add_verdict(0.84, 0.0)
    tightened = choose_threshold(stats, TARGET, STATIC, FLOOR)
    assert tightened.threshold > 0.84


def test_the_policy_floor_bounds_it() -> None:
    point = choose_threshold(_traffic(lambda _: 1.0, 5000, 0.3), TARGET, STATIC, 0.90)
    assert point.threshold == pytest.approx(0.90)


def test_merging_adds_counters() -> None:
    a, b = BucketStats(floor=FLOOR), BucketStats(floor=FLOOR)
    a.add_traffic(0.95)
    b.add_traffic(0.95)
    b.add_verdict(0.95, 1.0)
    a.merge(b)
    assert a.traffic[15] == 2 and a.judged[15] == 1 and a.judged_same[15] == 1
    with pytest.raises(ValueError):
        a.merge(BucketStats(floor=0.5))


def test_a_judge_with_errors_counts_less_than_a_perfect_one() -> None:
    perfect, noisy = JudgeErrors(), JudgeErrors(miss_rate=0.05, false_accept_rate=0.05)
    assert perfect.corrected(True, 0.9) == 1.0 and perfect.corrected(False, 0.9) == 0.0
    assert 0.99 < noisy.corrected(True, 0.9) < 1.0
    assert 0.0 < noisy.corrected(False, 0.9) < 0.5
    with pytest.raises(ValueError):
        JudgeErrors(miss_rate=1.2)


def test_judge_error_rates_are_estimated_where_the_truth_is_known() -> None:
    estimate = JudgeErrorEstimate(prior_verdicts=10)
    for index in range(200):  # exact repeats: truly the same; the judge misses 10 %
        estimate.record(truly_same=True, says_same=index % 10 != 0)
    errors = estimate.errors()
    assert 0.08 < errors.miss_rate < 0.12
    # The prior alone (1 in 10), taken at its one-sided 95 % upper bound.
    assert estimate.false_accept_estimate() == pytest.approx(0.1)
    assert 0.1 < errors.false_accept_rate < 0.5


def test_shadow_evidence_moves_it_down_while_the_served_region_has_no_audits() -> None:
    # The static default serves the top bucket and nothing audits it (the default audit
    # rate is 0): its precision is only the calibration's. Shadow verdicts below it are
    # the evidence; the bound is on what they add, and the threshold stops at the lowest
    # bucket they cover, never in the empty buckets below it.
    stats = BucketStats(floor=FLOOR)
    for _ in range(300):
        stats.add_traffic(0.995)
        stats.add_traffic(0.905)
        stats.add_verdict(0.905, 1.0)
    point = choose_threshold(stats, TARGET, STATIC, FLOOR)
    assert point.threshold == pytest.approx(0.90)
    assert point.lower_bound is not None and point.lower_bound >= TARGET


def test_a_sliver_of_unjudged_traffic_does_not_ride_on_the_served_region() -> None:
    stats = BucketStats(floor=FLOOR)
    for _ in range(2000):
        stats.add_traffic(0.995)
    for _ in range(200):
        stats.add_verdict(0.995, 1.0)  # audits: the served region is precise
    for _ in range(5):
        stats.add_traffic(0.85)  # a few candidates below, never judged
    assert choose_threshold(stats, TARGET, STATIC, FLOOR).threshold == STATIC


def test_the_chosen_point_reports_the_bound_of_what_it_serves() -> None:
    stats = _traffic(lambda s: 0.999 if s >= 0.88 else 0.6, 8000, 0.25)
    point = choose_threshold(stats, TARGET, STATIC, FLOOR)
    index = bucket_of(point.threshold, FLOOR)
    assert index is not None
    estimate = served_precision(stats, index, STATIC)
    assert estimate is not None
    assert (point.precision, point.lower_bound) == (
        round(estimate.precision, 4),
        round(estimate.lower_bound, 4),
    )
    assert point.judged == estimate.judged


def _judged(stats: BucketStats, similarity: float, verdicts: int, agreeing: int) -> None:
    """`verdicts` judged candidates at `similarity`, `agreeing` of them the same."""
    for number in range(verdicts):
        stats.add_traffic(similarity)
        stats.add_verdict(similarity, 1.0 if number < agreeing else 0.0)


def _own_bound(stats: BucketStats, lowest: int, stop: int) -> float:
    """The pooled bound of buckets lowest..stop-1 on their own evidence."""
    alone = BucketStats(floor=FLOOR)
    for index in range(lowest, stop):
        alone.traffic[index] = stats.traffic[index]
        alone.judged[index] = stats.judged[index]
        alone.judged_same[index] = stats.judged_same[index]
    estimate = served_precision(alone, lowest, STATIC)
    assert estimate is not None
    return estimate.lower_bound


def test_the_served_set_reaches_the_target_where_no_added_bucket_does() -> None:
    # Most traffic is served from the static default's region (audited, precise, and
    # counted at no more than its calibrated 0.97); each bucket below it is a little
    # under the target 0.95 on its own, but weighted by its share of the traffic the
    # whole served set from 0.90 up keeps its bound at the target: that is what is
    # served.
    target = 0.95
    stats = BucketStats(floor=FLOOR)
    for _ in range(4000):
        stats.add_traffic(0.985)
    for _ in range(300):
        stats.add_verdict(0.985, 1.0)
    for similarity in (0.905, 0.915, 0.925, 0.935, 0.945, 0.955, 0.965):
        _judged(stats, similarity, 100, 94)  # 0.94 each
    static_bucket, lowest = bucket_of(STATIC, FLOOR), bucket_of(0.905, FLOOR)
    assert static_bucket is not None and lowest is not None
    for index in range(lowest, static_bucket):
        assert _own_bound(stats, index, index + 1) < target
    point = choose_threshold(stats, target, STATIC, FLOOR)
    assert point.threshold == pytest.approx(0.90)
    assert point.lower_bound is not None and point.lower_bound >= target


def test_a_served_set_whose_pooled_bound_falls_short_keeps_the_static_default() -> None:
    stats = BucketStats(floor=FLOOR)
    _judged(stats, 0.985, 300, 300)  # audits: the served region is precise
    for similarity in (0.905, 0.925, 0.945, 0.965):
        _judged(stats, similarity, 100, 90)  # 0.90 below it: pooled, 0.93 from 0.90 up
    point = choose_threshold(stats, TARGET, STATIC, FLOOR)
    assert point.threshold == STATIC
    estimate = served_precision(stats, bucket_of(0.905, FLOOR) or 0, STATIC)
    assert estimate is not None and estimate.lower_bound < TARGET


def test_it_stops_where_the_pooled_bound_still_holds() -> None:
    # Precise down to 0.93, wrong answers below: the pooled bound holds from 0.93 up and
    # fails once the 0.90-0.92 buckets join.
    stats = BucketStats(floor=FLOOR)
    _judged(stats, 0.985, 300, 300)
    for similarity in (0.935, 0.945, 0.955, 0.965):
        _judged(stats, similarity, 60, 60)
    for similarity in (0.905, 0.915, 0.925):
        _judged(stats, similarity, 60, 40)
    assert choose_threshold(stats, TARGET, STATIC, FLOOR).threshold == pytest.approx(0.93)


def test_a_move_needs_the_minimum_of_verdicts_below_the_static_default() -> None:
    # However precise the audited region above, the buckets a move adds must hold as
    # many verdicts as a spotless record needs to show the target on its own.
    needed = min_added_verdicts(TARGET)
    assert 87 < needed < 88
    stats = BucketStats(floor=FLOOR)
    _judged(stats, 0.985, 2000, 2000)
    _judged(stats, 0.905, 80, 80)
    assert choose_threshold(stats, TARGET, STATIC, FLOOR).threshold == STATIC
    _judged(stats, 0.905, 8, 8)
    assert choose_threshold(stats, TARGET, STATIC, FLOOR).threshold == pytest.approx(0.90)
    assert min_added_verdicts(0.92) < min_added_verdicts(0.95) < needed
    assert min_added_verdicts(1.0) == float("inf")


def test_the_bound_must_hold_at_the_chosen_floor_not_at_every_floor_above() -> None:
    # A thinly judged step just under the static default (10 verdicts) cannot show the
    # target, and need not: the served set from 0.90 up, with 200 more, does.
    stats = BucketStats(floor=FLOOR)
    _judged(stats, 0.965, 10, 10)
    _judged(stats, 0.905, 200, 200)
    assert choose_threshold(stats, TARGET, STATIC, FLOOR).threshold == pytest.approx(0.90)


def test_it_stops_only_at_a_bucket_with_verdicts() -> None:
    stats = BucketStats(floor=FLOOR)
    _judged(stats, 0.905, 300, 300)
    for _ in range(50):
        stats.add_traffic(0.855)  # traffic below, never judged
    assert choose_threshold(stats, TARGET, STATIC, FLOOR).threshold == pytest.approx(0.90)
