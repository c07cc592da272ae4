"""`gateway eval adaptive`'s loop: a labelled stream replayed through the adaptive
operating point, next to the static default and the best static threshold in
hindsight. Synthetic, seeded streams on the calibrated scale."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from gateway_tools.evaluation.adaptive_sim import (
    SimulationSettings,
    StreamPair,
    best_static,
    build_stream,
    simulate,
    static_curve,
)

LEVELS = [round(0.80 + 0.01 * i, 2) for i in range(21)]  # the calibrated staircase


def _pairs(truth: Callable[[float], float], count: int, seed: int = 3) -> list[StreamPair]:
    """`count` checked candidates spread over the levels, duplicates with probability
    `truth(similarity)`; one in five failed a check (never served, never counted)."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        similarity = rng.choice(LEVELS)
        pairs.append(
            StreamPair(
                similarity=similarity,
                passes=rng.random() >= 0.2,
                duplicate=rng.random() < truth(similarity),
                language="en",
                half="a",
            )
        )
    return pairs


def test_precise_traffic_is_served_further_down_at_a_bounded_precision() -> None:
    stream = build_stream(_pairs(lambda _: 0.995, 6000), seed=1)
    run = simulate(stream, SimulationSettings())
    assert run.adaptive.served > 2 * run.static.served
    assert run.adaptive.precision() >= 0.97 - 0.01
    assert run.thresholds["all"] < 0.90
    # The threshold moved once there was evidence, and the timeline shows it.
    assert run.timeline[0].thresholds["all"] == 0.97
    assert run.timeline[-1].position == len(stream)


def test_traffic_no_better_than_the_calibration_stays_at_the_static_default() -> None:
    # Below the static default, the calibrated scale (under the target) is the truth.
    run = simulate(build_stream(_pairs(lambda s: s, 6000), seed=1), SimulationSettings())
    assert run.thresholds["all"] == 0.97
    assert run.adaptive.served == run.static.served


def test_a_band_of_wrong_answers_stays_unserved() -> None:
    pairs = _pairs(lambda s: 0.998 if s >= 0.90 else 0.5, 8000)
    run = simulate(build_stream(pairs, seed=1), SimulationSettings())
    assert 0.88 <= run.thresholds["all"] <= 0.91
    assert run.adaptive.precision() >= 0.96


def test_a_judge_that_errs_keeps_the_precision_within_two_points() -> None:
    pairs = _pairs(lambda s: 0.995 if s >= 0.88 else 0.7, 8000)
    run = simulate(build_stream(pairs, seed=1), SimulationSettings(judge_error=0.02))
    assert run.wrong_verdicts > 0
    assert run.adaptive.precision() >= 0.97 - 0.02
    assert run.adaptive.served > run.static.served


def test_same_settings_same_run() -> None:
    stream = build_stream(_pairs(lambda _: 0.99, 2000), seed=5)
    first, second = simulate(stream, SimulationSettings()), simulate(stream, SimulationSettings())
    assert (first.adaptive, first.thresholds) == (second.adaptive, second.thresholds)


def test_a_small_set_is_replayed_until_the_stream_is_long_enough() -> None:
    pairs = _pairs(lambda _: 1.0, 30)
    stream = build_stream(pairs, seed=2, min_length=100)
    assert len(stream) == 120 and sorted(stream[:30], key=repr) == sorted(pairs, key=repr)
    assert len(build_stream(pairs, seed=2)) == 30


def test_static_thresholds_serve_whole_ties_and_hindsight_picks_the_best_recall() -> None:
    def pair(similarity: float, duplicate: bool, passes: bool = True) -> StreamPair:
        return StreamPair(similarity, passes, duplicate, "en", "a")

    stream = [
        pair(1.0, True),
        pair(0.95, True),
        pair(0.95, False),  # a tie: served together with its twin or not at all
        pair(0.90, True),
        pair(0.85, False),
        pair(0.99, False, passes=False),  # refused by a check: no threshold serves it
        pair(0.50, True, passes=False),
    ]
    curve = static_curve(stream)
    assert [(p.threshold, p.served) for p in curve] == [(1.0, 1), (0.95, 3), (0.90, 4), (0.85, 5)]
    assert curve[2].precision == pytest.approx(0.75)
    assert curve[2].recall == pytest.approx(3 / 4)  # of the 4 duplicates, one refused
    best = best_static(curve, 0.75)
    assert best is not None and best.threshold == 0.90
    assert best_static(curve, 0.99) == curve[0]


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        SimulationSettings(judge_error=0.5)
    with pytest.raises(ValueError):
        SimulationSettings(shadow_rate=1.5)
    with pytest.raises(ValueError):
        SimulationSettings(floor=0.99, static_threshold=0.97)
