"""Prometheus series read at scrape time from the parts that keep their own counts
(policy reloads, hit audits, adaptive statistics and alerts, capped stores, chat-model
reviews).

The composition root (`gateway/wiring.py`) calls each `export_*` once, after building the
part it reads; the metrics registry calls the readers on every scrape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gateway.adaptive.report import export_judge_metrics, tenant_rows
from gateway.telemetry.metrics import GatewayMetrics, ScrapeReading

if TYPE_CHECKING:
    from gateway.adaptive.stats import AdaptiveStats
    from gateway.cache.eviction import CapacityLedger
    from gateway.pipeline.audit import HitAuditor
    from gateway.pipeline.namespaces import NamespaceLimiter
    from gateway.policy.loader import PolicyStore
    from gateway.review.usage import ReviewUsage
    from gateway.telemetry.hit_rate_alert import HitRateDropMonitor


def export_policy_reloads(metrics: GatewayMetrics, policies: PolicyStore) -> None:
    metrics.counter_at_scrape(
        "gateway_policy_reloads",
        "Policy reloads attempted.",
        (),
        lambda: [((), float(policies.reloads_total))],
    )
    metrics.counter_at_scrape(
        "gateway_policy_reload_errors",
        "Policy reloads rejected (previous policies kept).",
        (),
        lambda: [((), float(policies.reload_errors_total))],
    )
    metrics.gauge_at_scrape(
        "gateway_policy_reload_failing",
        "1 while the last policy reload failed.",
        (),
        lambda: [((), 1.0 if policies.status().get("last_error") else 0.0)],
    )


def export_audit(metrics: GatewayMetrics, auditor: HitAuditor) -> None:
    def rows(field: str) -> list[tuple[tuple[str, ...], float]]:
        return [((row["tenant"], row["layer"]), float(row[field])) for row in auditor.estimates()]

    labels = ("tenant", "layer")
    metrics.counter_at_scrape(
        "gateway_audit_samples",
        "Cache hits audited against a fresh answer.",
        labels,
        lambda: rows("sampled"),
    )
    metrics.counter_at_scrape(
        "gateway_audit_false_hits",
        "Audited hits whose fresh answer disagreed.",
        labels,
        lambda: rows("false_hits"),
    )
    metrics.gauge_at_scrape(
        "gateway_audit_false_hit_rate",
        "Estimated false-hit rate (audited share).",
        labels,
        lambda: rows("rate"),
    )
    metrics.gauge_at_scrape(
        "gateway_audit_false_hit_rate_upper95",
        "Upper end of the 95 % Wilson interval of the false-hit rate.",
        labels,
        lambda: [
            ((row["tenant"], row["layer"]), float(row["ci95"][1])) for row in auditor.estimates()
        ],
    )


# The adaptive statistics' per-tenant rows (`gateway.adaptive.report.tenant_rows`), one
# series each: (name, documentation, the row's value or None for no sample).
RowPick = Callable[[dict[str, Any]], float | None]
_ADAPTIVE_GAUGES: tuple[tuple[str, str, RowPick], ...] = (
    ("gateway_adaptive_threshold", "Semantic serving threshold in force (calibrated).",
     lambda r: r["threshold"]),
    ("gateway_adaptive_supported_threshold",
     "Lowest threshold the statistics support at the target (what adapt serves at).",
     lambda r: r["supported_threshold"]),
    ("gateway_adaptive_precision", "Estimated precision of what that threshold serves.",
     lambda r: r["precision"]),
    ("gateway_adaptive_precision_lower95", "Its one-sided 95 % lower bound.",
     lambda r: r["precision_lower95"]),
    ("gateway_adaptive_precision_upper95", "Its one-sided 95 % upper bound.",
     lambda r: r["precision_interval"][1] if r["precision_interval"] else None),
)  # fmt: skip
_ADAPTIVE_COUNTERS: tuple[tuple[str, str, RowPick], ...] = (
    ("gateway_adaptive_shadow_judged", "Semantic misses judged in the shadow.",
     lambda r: r["shadow_judged"]),
    ("gateway_adaptive_left_on_table_hits",
     "Shadow-accepted misses: hits left on the table (corrected for judge errors).",
     lambda r: r["left_on_table"]["hits"]),
    ("gateway_adaptive_left_on_table_tokens", "Tokens those misses cost upstream.",
     lambda r: r["left_on_table"]["tokens"]),
    ("gateway_adaptive_left_on_table_cost_usd", "Estimated cost of those misses.",
     lambda r: r["left_on_table"]["cost_usd"]),
    ("gateway_adaptive_judge_calls", "Shadow judgments made.", lambda r: r["judge"]["calls"]),
    ("gateway_adaptive_judge_tokens", "Tokens the judge model used.",
     lambda r: r["judge"]["tokens"]),
    ("gateway_adaptive_judge_cost_usd", "Estimated cost of the judge model.",
     lambda r: r["judge"]["cost_usd"]),
)  # fmt: skip


def export_adaptive(
    metrics: GatewayMetrics,
    stats: AdaptiveStats,
    policies: PolicyStore,
    alerts: HitRateDropMonitor,
) -> None:
    def rows() -> list[dict[str, Any]]:
        return tenant_rows(stats, lambda tenant: policies.resolve(tenant, ""))

    def read(pick: RowPick) -> ScrapeReading:
        return lambda: [
            ((row["tenant"],), float(value)) for row in rows() if (value := pick(row)) is not None
        ]

    labels = ("tenant",)
    for name, documentation, pick in _ADAPTIVE_GAUGES:
        metrics.gauge_at_scrape(name, documentation, labels, read(pick))
    for name, documentation, pick in _ADAPTIVE_COUNTERS:
        metrics.counter_at_scrape(name, documentation, labels, read(pick))
    export_judge_metrics(metrics, stats)
    metrics.gauge_at_scrape(
        "gateway_hit_rate_drop_alert",
        "1 while the tenant's hit rate has fallen by the configured points within the window.",
        labels,
        lambda: [((s.tenant,), 1.0 if s.firing else 0.0) for s in alerts.states()],
    )
    metrics.gauge_at_scrape(
        "gateway_hit_rate_drop_points",
        "Percentage points the tenant's hit rate fell within the alert window.",
        labels,
        lambda: [((s.tenant,), s.drop_points) for s in alerts.states()],
    )


def export_capacity(
    metrics: GatewayMetrics, ledger: CapacityLedger, namespaces: NamespaceLimiter
) -> None:
    metrics.counter_at_scrape(
        "gateway_cache_evictions",
        "Entries the capped stores removed, by store and reason "
        "(capacity, tenant_capacity, expired).",
        ("store", "reason"),
        lambda: [((store, reason), float(n)) for (store, reason), n in ledger.evictions().items()],
    )
    metrics.gauge_at_scrape(
        "gateway_cache_entries",
        "Entries held by each capped store (embedded backend).",
        ("store",),
        lambda: [((store,), float(u.entries)) for store, u in ledger.usage().items()],
    )
    metrics.gauge_at_scrape(
        "gateway_cache_bytes",
        "Bytes counted against each capped store's cap (embedded backend).",
        ("store",),
        lambda: [((store,), float(u.bytes)) for store, u in ledger.usage().items()],
    )
    metrics.counter_at_scrape(
        "gateway_namespace_refusals",
        "Requests not cached because their tenant already used its cap of namespaces.",
        (),
        lambda: [((), float(namespaces.refused_total))],
    )


def export_review(metrics: GatewayMetrics, usage: ReviewUsage | None) -> None:
    """A chat-model reviewer's tokens, cost and verdicts per tenant and model (nothing
    for the local reviewer, which spends none)."""
    if usage is None:
        return
    labels = ("tenant", "model")
    metrics.counter_at_scrape(
        "gateway_review_tokens",
        "Tokens (prompt and completion) spent on chat-model reviews.",
        labels,
        lambda: [((t, m), float(tally.tokens)) for t, m, tally in usage.tallies()],
    )
    metrics.counter_at_scrape(
        "gateway_review_cost_usd",
        "Estimated cost of chat-model reviews (config prices or litellm's price map).",
        labels,
        lambda: [((t, m), tally.cost_usd) for t, m, tally in usage.tallies()],
    )
    metrics.counter_at_scrape(
        "gateway_review_calls",
        "Chat-model review calls by verdict (accepted, rejected, unavailable).",
        ("tenant", "model", "verdict"),
        lambda: [
            ((t, m, verdict), float(n))
            for t, m, tally in usage.tallies()
            for verdict, n in sorted(tally.verdicts.items())
        ],
    )
    metrics.counter_at_scrape(
        "gateway_review_budget_refusals",
        "Reviews refused because the tenant's hourly review token budget was spent.",
        labels,
        lambda: [((t, m), float(tally.over_budget)) for t, m, tally in usage.tallies()],
    )
