"""The hit-rate-drop alert on a controlled clock: a fall of 15 points within 30 minutes
fires once (metric state and one log line), a smaller fall or too little traffic does
not, and it clears when the rate recovers."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from gateway.telemetry.alert_settings import HitRateDropAlert
from gateway.telemetry.hit_rate_alert import HitRateDropMonitor
from gateway.telemetry.records import DecisionRecord


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _record(clock: Clock, layer: str, tenant: str = "acme") -> DecisionRecord:
    return DecisionRecord(
        request_id="r", at=clock.now, tenant=tenant, model="m", stream=False, layer=layer,
        reason=None, status=200, stored=False, coalesced=False, similarity=None,
        review_verdict=None, mismatch_kinds=(), classifier_rule=None, tokens_saved=0,
        cost_saved_usd=0.0, memory_tokens=0, memory_items=0, memory_note=None, total_ms=1.0,
    )  # fmt: skip


def _minutes(monitor: HitRateDropMonitor, clock: Clock, minutes: int, hit_share: float) -> None:
    for _ in range(minutes):
        for index in range(20):
            monitor.add(_record(clock, "exact" if index < hit_share * 20 else "miss"))
        clock.now += 60


def test_a_fall_of_15_points_within_30_minutes_fires_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    monitor = HitRateDropMonitor(HitRateDropAlert(), clock)
    _minutes(monitor, clock, 10, 0.6)
    assert not monitor.evaluate("acme").firing
    with caplog.at_level(logging.WARNING, logger="gateway.alerts"):
        _minutes(monitor, clock, 6, 0.4)
        clock.now -= 60  # evaluate within the last minute that had traffic
        state = monitor.evaluate("acme")
        monitor.states()
    assert state.firing and state.drop_points == pytest.approx(20.0)
    lines = [r for r in caplog.records if "hit rate of tenant acme fell" in r.getMessage()]
    assert len(lines) == 1


def test_a_smaller_fall_or_a_bypass_wave_does_not_fire() -> None:
    clock = Clock()
    monitor = HitRateDropMonitor(HitRateDropAlert(), clock)
    _minutes(monitor, clock, 10, 0.6)
    _minutes(monitor, clock, 6, 0.5)
    for _ in range(200):  # bypassed requests say nothing about the cache
        monitor.add(_record(clock, "bypass"))
    clock.now -= 60
    assert not monitor.evaluate("acme").firing


def test_it_clears_when_the_rate_recovers() -> None:
    clock = Clock()
    monitor = HitRateDropMonitor(HitRateDropAlert(points=10, window_minutes=20), clock)
    _minutes(monitor, clock, 8, 0.8)
    _minutes(monitor, clock, 6, 0.2)
    clock.now -= 60
    assert monitor.check("acme").firing
    clock.now += 60
    _minutes(monitor, clock, 6, 0.8)
    clock.now -= 60
    assert not monitor.check("acme").firing


def _recomputed(
    monitor: HitRateDropMonitor, settings: HitRateDropAlert, tenant: str
) -> float | None:
    """The reference rate computed afresh from the monitor's minutes (the rule as written)."""
    minutes = monitor._minutes.get(tenant, {})
    now = int(monitor._clock() // 60)
    span = settings.recent_minutes
    best: float | None = None
    for start in range(now - settings.window_minutes + 1, now - 2 * span + 2):
        requests = sum(minutes.get(m, [0, 0])[0] for m in range(start, start + span))
        hits = sum(minutes.get(m, [0, 0])[1] for m in range(start, start + span))
        if requests >= settings.min_requests and (best is None or hits / requests > best):
            best = hits / requests
    return best


def test_the_remembered_reference_follows_late_records_and_the_clock() -> None:
    """The reference is remembered per minute; records dated into its spans (a request
    that took minutes), ahead of the clock, or a clock that moves must still give the
    rate computed from scratch, for every record."""
    import random

    rng = random.Random(7)
    clock = Clock()
    settings = HitRateDropAlert(window_minutes=12, recent_minutes=3, min_requests=5)
    monitor = HitRateDropMonitor(settings, clock)
    for _ in range(3000):
        clock.now += rng.choice((0.0, 0.0, 0.0, 1.0, 7.0, 60.0))
        record = _record(clock, rng.choice(("exact", "semantic", "miss", "miss", "bypass")))
        late_seconds = rng.choice((0.0, 0.0, 0.0, 0.0, 90.0, 300.0, 600.0, -60.0))
        monitor.add(dataclasses.replace(record, at=clock.now - late_seconds))
        assert monitor.evaluate("acme").reference_rate == _recomputed(monitor, settings, "acme")


def test_a_late_record_of_an_earlier_minute_moves_the_reference() -> None:
    # The reference is worked out once per minute; a record that lands in a minute the
    # reference reads (a slow request) must still count.
    clock = Clock()
    monitor = HitRateDropMonitor(HitRateDropAlert(), clock)
    _minutes(monitor, clock, 10, hit_share=0.5)
    before = monitor.evaluate("acme").reference_rate
    late = _record(clock, "exact")
    for _ in range(100):
        monitor.add(dataclasses.replace(late, at=clock.now - 8 * 60))
    after = monitor.evaluate("acme").reference_rate
    assert before == 0.5
    assert after is not None and after > before
