"""Prometheus metrics, in a registry owned by the app (no process-global registry, so
several apps in one process, as in the tests, never share counters).

Everything a decision record says is counted here; values that live elsewhere (policy
reloads, the audit's estimates) are read when `/metrics` is scraped."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from gateway.telemetry.records import DecisionRecord

_LATENCY_BUCKETS_SECONDS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
_SIMILARITY_BUCKETS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.88, 0.9, 0.92, 0.94, 0.96, 0.98, 1.0)

# (name, help, labels, read) for counters and gauges computed at scrape time.
ScrapeReading = Callable[[], Iterable[tuple[tuple[str, ...], float]]]


class _ScrapeCollector(Collector):
    def __init__(self) -> None:
        self.counters: list[tuple[str, str, tuple[str, ...], ScrapeReading]] = []
        self.gauges: list[tuple[str, str, tuple[str, ...], ScrapeReading]] = []

    def collect(self) -> Iterator[Any]:
        for name, documentation, labels, read in self.counters:
            counter = CounterMetricFamily(name, documentation, labels=list(labels))
            for values, value in read():
                counter.add_metric(list(values), value)
            yield counter
        for name, documentation, labels, read in self.gauges:
            gauge = GaugeMetricFamily(name, documentation, labels=list(labels))
            for values, value in read():
                gauge.add_metric(list(values), value)
            yield gauge


class GatewayMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        registry = self.registry
        self.requests = Counter(
            "gateway_requests",
            "Chat requests by tenant, model, cache layer and reason code.",
            ["tenant", "model", "layer", "reason"],
            registry=registry,
        )
        self.request_seconds = Histogram(
            "gateway_request_duration_seconds",
            "Time the gateway spent on a request, by layer (streams: until the last chunk).",
            ["layer"],
            buckets=_LATENCY_BUCKETS_SECONDS,
            registry=registry,
        )
        self.stage_seconds = Histogram(
            "gateway_stage_duration_seconds",
            "Time spent in each pipeline stage.",
            ["stage"],
            buckets=_LATENCY_BUCKETS_SECONDS,
            registry=registry,
        )
        self.similarity = Histogram(
            "gateway_semantic_similarity",
            "Calibrated similarity of the semantic candidate that decided a request.",
            ["layer"],
            buckets=_SIMILARITY_BUCKETS,
            registry=registry,
        )
        self.review_verdicts = Counter(
            "gateway_review_verdicts",
            "Gray-band review verdicts.",
            ["verdict"],
            registry=registry,
        )
        self.tokens_saved = Counter(
            "gateway_tokens_saved",
            "Tokens not spent upstream because an answer came from the cache.",
            ["tenant", "model"],
            registry=registry,
        )
        self.cost_saved = Counter(
            "gateway_cost_saved_usd",
            "Estimated upstream cost not spent (litellm's bundled price map).",
            ["tenant", "model"],
            registry=registry,
        )
        # Spend and budgets (gateway/spend/): what forwarded requests cost, next to
        # `gateway_cost_saved_usd`, priced the same way.
        self.cost_spent = Counter(
            "gateway_cost_spent_usd",
            "Upstream cost of forwarded requests (litellm's price map or config prices).",
            ["tenant", "model"],
            registry=registry,
        )
        self.budget_soft_exceeded = Counter(
            "gateway_budget_soft_exceeded",
            "Budget periods in which a tenant's spend passed the soft threshold.",
            ["tenant", "period"],
            registry=registry,
        )
        self.budget_exceeded = Counter(
            "gateway_budget_exceeded",
            "Budget periods in which a tenant's spend reached its cap (requests refused).",
            ["tenant", "period"],
            registry=registry,
        )
        self.memory_tokens = Counter(
            "gateway_memory_tokens_injected",
            "Tokens of memory injected into forwarded requests.",
            ["tenant"],
            registry=registry,
        )
        self.store_failures = Counter(
            "gateway_store_failures",
            "Store operations that failed (the request failed open).",
            ["store", "operation"],
            registry=registry,
        )
        # Requests the gateway's own rate limits refused (429), by the exhausted scope.
        self.rate_limited = Counter(
            "gateway_rate_limited",
            "Requests refused by the gateway's rate limits.",
            ["tenant", "scope"],
            registry=registry,
        )
        self.exact_hit_shortcut = Counter(
            "gateway_exact_hit_shortcut",
            "Exact hits answered by the shortcut in front of the full path "
            "(gateway/api/hit_shortcut.py); they count in gateway_requests too.",
            registry=registry,
        )
        self._scrape = _ScrapeCollector()
        registry.register(self._scrape)
        # (metric, label values) -> its child. `labels()` validates and locks on every
        # call; a request's record takes ~12 of them (one per stage), ~60 µs a request
        # on this box. Children are never removed, so a child once found stays valid.
        self._children: dict[tuple[object, tuple[str, ...]], Any] = {}

    def _child(self, metric: Counter | Histogram, *values: str) -> Any:
        key = (metric, values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def observe(self, record: DecisionRecord) -> None:
        child = self._child
        child(self.requests, record.tenant, record.model, record.layer, record.reason or "").inc()
        child(self.request_seconds, record.layer).observe(record.total_ms / 1000)
        for stage, milliseconds in record.stages_ms.items():
            child(self.stage_seconds, stage).observe(milliseconds / 1000)
        if record.similarity is not None:
            child(self.similarity, record.layer).observe(record.similarity)
        if record.review_verdict is not None:
            child(self.review_verdicts, record.review_verdict).inc()
        if record.tokens_saved:
            child(self.tokens_saved, record.tenant, record.model).inc(record.tokens_saved)
        if record.cost_saved_usd:
            child(self.cost_saved, record.tenant, record.model).inc(record.cost_saved_usd)
        if record.memory_tokens:
            child(self.memory_tokens, record.tenant).inc(record.memory_tokens)

    def store_failure(self, store: str, operation: str) -> None:
        self.store_failures.labels(store, operation).inc()

    def counter_at_scrape(
        self, name: str, documentation: str, labels: tuple[str, ...], read: ScrapeReading
    ) -> None:
        self._scrape.counters.append((name, documentation, labels, read))

    def gauge_at_scrape(
        self, name: str, documentation: str, labels: tuple[str, ...], read: ScrapeReading
    ) -> None:
        self._scrape.gauges.append((name, documentation, labels, read))

    def render(self) -> bytes:
        return generate_latest(self.registry)
