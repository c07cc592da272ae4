"""Decision records counted into the Prometheus metrics: each label set its own series,
each stage its own histogram, however often and in whatever order records arrive."""

from __future__ import annotations

import time

from gateway.telemetry.metrics import GatewayMetrics
from gateway.telemetry.records import DecisionRecord


def _record(
    tenant: str, layer: str, reason: str | None, stages: dict[str, float]
) -> DecisionRecord:
    return DecisionRecord(
        request_id="r", at=time.time(), tenant=tenant, model="m", stream=False, layer=layer,
        reason=reason, status=200, stored=False, coalesced=False, similarity=None,
        review_verdict=None, mismatch_kinds=(), classifier_rule=None, tokens_saved=0,
        cost_saved_usd=0.0, memory_tokens=0, memory_items=0, memory_note=None, total_ms=4.0,
        stages_ms=stages,
    )  # fmt: skip


def _sample(metrics: GatewayMetrics, name: str, labels: dict[str, str]) -> float | None:
    value = metrics.registry.get_sample_value(name, labels)
    return value


def test_each_label_set_and_stage_is_counted_apart() -> None:
    metrics = GatewayMetrics()
    for _ in range(3):
        metrics.observe(_record("acme", "miss", "below_threshold", {"classify": 1.0}))
    metrics.observe(_record("globex", "miss", "below_threshold", {"forward": 2.0}))
    metrics.observe(_record("acme", "exact", None, {"classify": 1.0, "forward": 3.0}))

    def requests(tenant: str, layer: str, reason: str) -> float | None:
        labels = {"tenant": tenant, "model": "m", "layer": layer, "reason": reason}
        return _sample(metrics, "gateway_requests_total", labels)

    assert requests("acme", "miss", "below_threshold") == 3
    assert requests("globex", "miss", "below_threshold") == 1
    assert requests("acme", "exact", "") == 1
    stage = "gateway_stage_duration_seconds_count"
    assert _sample(metrics, stage, {"stage": "classify"}) == 4
    assert _sample(metrics, stage, {"stage": "forward"}) == 2
    summed = _sample(metrics, "gateway_stage_duration_seconds_sum", {"stage": "forward"})
    assert summed is not None and abs(summed - 0.005) < 1e-9
    assert _sample(metrics, "gateway_request_duration_seconds_count", {"layer": "miss"}) == 4


def test_two_gateways_in_one_process_count_apart() -> None:
    first, second = GatewayMetrics(), GatewayMetrics()
    first.observe(_record("acme", "miss", "below_threshold", {"classify": 1.0}))
    labels = {"tenant": "acme", "model": "m", "layer": "miss", "reason": "below_threshold"}
    assert _sample(first, "gateway_requests_total", labels) == 1
    assert _sample(second, "gateway_requests_total", labels) is None
