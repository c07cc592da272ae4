"""Where every finished request goes: a decision record kept in a bounded in-memory log
(`/admin/decisions`), counted into metrics and rolling stats, and written as one JSON
log line. Per process; the log holds the most recent `capacity` records."""

from __future__ import annotations

import dataclasses
import logging
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from gateway.telemetry.hit_rate_alert import HitRateDropMonitor
from gateway.telemetry.metrics import GatewayMetrics
from gateway.telemetry.records import DecisionRecord
from gateway.telemetry.stats import DecisionStats

logger = logging.getLogger("gateway.decisions")

# (gateway model, prompt tokens, completion tokens) -> USD; 0 when the price is unknown.
CostEstimator = Callable[[str, int, int], float]


def no_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    return 0.0


class DecisionRecorder:
    def __init__(
        self,
        metrics: GatewayMetrics,
        cost: CostEstimator = no_cost,
        capacity: int = 1000,
        stats: DecisionStats | None = None,
        alerts: HitRateDropMonitor | None = None,
    ) -> None:
        self.metrics = metrics
        self.alerts = alerts
        self.stats = stats or DecisionStats()
        self._cost = cost
        self._recent: deque[DecisionRecord] = deque(maxlen=capacity)

    def record(
        self, record: DecisionRecord, saved_usage: Mapping[str, Any] | None = None
    ) -> DecisionRecord:
        """Keeps, counts and logs a finished request's record; `saved_usage` (a hit's
        stored usage, when the record was built without its price) prices what it saved."""
        if saved_usage and not record.cost_saved_usd:
            cost = self.saved_cost(record.model, record.tokens_saved, saved_usage)
            if cost:
                record = dataclasses.replace(record, cost_saved_usd=cost)
        self._recent.append(record)
        self.stats.add(record)
        self.metrics.observe(record)
        if self.alerts is not None:
            self.alerts.add(record)
        if logger.isEnabledFor(logging.INFO):
            # The prompt, when recorded, stays in the in-memory log only: never in logs.
            line = record.to_json()
            line.pop("prompt", None)
            logger.info(orjson.dumps(line).decode())
        return record

    def saved_cost(
        self, model: str, tokens_saved: int, saved_usage: Mapping[str, Any] | None
    ) -> float:
        """What a hit saved, in USD: its stored usage at the model's price."""
        if not tokens_saved or not saved_usage:
            return 0.0
        cost = self._cost(
            model,
            int(saved_usage.get("prompt_tokens") or 0),
            int(saved_usage.get("completion_tokens") or 0),
        )
        return round(cost, 8)

    def recent(
        self, limit: int, tenant: str | None = None, layer: str | None = None
    ) -> list[DecisionRecord]:
        """Newest first."""
        found: list[DecisionRecord] = []
        for record in reversed(self._recent):
            if tenant is not None and record.tenant != tenant:
                continue
            if layer is not None and record.layer != layer:
                continue
            found.append(record)
            if len(found) == limit:
                break
        return found
