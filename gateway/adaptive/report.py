"""What operators see of the adaptive statistics, per tenant (`/admin/stats`,
`/metrics`, the dashboard): the threshold in force, the estimated precision of what it
serves with its 95 % interval, hits left on the table, judge calls and cost."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gateway.adaptive.buckets import bucket_of
from gateway.adaptive.judge_error import JudgeErrorEstimate
from gateway.adaptive.stats import AdaptiveStats, Scope
from gateway.adaptive.threshold import DEFAULT_PRIOR_STRENGTH, served_precision
from gateway.policy.models import Policy
from gateway.telemetry.metrics import GatewayMetrics, ScrapeReading

# tenant -> the tenant's policy (for any model)
TenantPolicy = Callable[[str], Policy]


def precision_interval(
    stats: AdaptiveStats, scope: Scope, threshold: float, static_threshold: float
) -> list[float] | None:
    """Two-sided 90 % (each side 95 %) interval of the precision of serving from
    `threshold` up, as its traffic sees it: the stratified estimate that
    `threshold.choose_threshold` bounds."""
    buckets = stats.view(scope).buckets
    lowest = bucket_of(min(threshold, 1.0), buckets.floor, buckets.width)
    estimate = served_precision(
        buckets, 0 if lowest is None else lowest, static_threshold, DEFAULT_PRIOR_STRENGTH
    )
    if estimate is None:
        return None
    return [round(estimate.lower_bound, 4), round(estimate.upper_bound, 4)]


def tenant_rows(stats: AdaptiveStats, policy_for: TenantPolicy) -> list[dict[str, Any]]:
    rows = []
    for scope in stats.tenant_scopes():
        policy = policy_for(scope.tenant).semantic_cache
        adaptive = policy.adaptive
        point = stats.operating_point(
            scope, policy.target_precision, policy.accept_threshold, adaptive.floor
        )
        serving = point.threshold if adaptive.mode == "adapt" else policy.accept_threshold
        view = stats.view(scope)
        tallies = view.tallies
        rows.append(
            {
                "tenant": scope.tenant,
                "mode": adaptive.mode,
                "threshold": round(serving, 4),
                "supported_threshold": round(point.threshold, 4),
                "static_threshold": policy.accept_threshold,
                "floor": adaptive.floor,
                "target_precision": policy.target_precision,
                "precision": point.precision,
                "precision_lower95": point.lower_bound,
                "precision_interval": precision_interval(
                    stats, scope, point.threshold, policy.accept_threshold
                ),
                "verdicts": round(view.buckets.total_judged(), 3),
                "traffic": round(sum(view.buckets.traffic), 3),
                "shadow_judged": int(tallies["shadow_judged"]),
                "seeded_verdicts": int(tallies["seed_verdicts"]),
                "left_on_table": {
                    "hits": round(tallies["shadow_accepted"], 3),
                    "tokens": round(tallies["left_tokens"], 1),
                    "cost_usd": round(tallies["left_cost_usd"], 8),
                },
                "judge": {
                    "name": "local"
                    if adaptive.judge == "local"
                    else f"model:{adaptive.judge_model}",
                    "calls": int(tallies["judge_calls"]),
                    "tokens": int(tallies["judge_tokens"]),
                    "cost_usd": round(tallies["judge_cost_usd"], 8),
                },
                "audits": {
                    "verdicts": int(tallies["audit_verdicts"]),
                    "false_hits": int(tallies["audit_false"]),
                },
                "scopes": [
                    {
                        "language": sub.language or None,
                        "model": sub.model or None,
                        "verdicts": round(stats.view(sub).buckets.total_judged(), 3),
                    }
                    for sub in stats.sub_scopes(scope.tenant)
                ],
            }
        )
    return rows


def judge_rows(stats: AdaptiveStats) -> list[dict[str, Any]]:
    """Per judge: its verdicts on pairs of known truth and the error rates they give
    (the false-accept rate verdicts are corrected with is the estimate's 95 % upper
    bound; `false_accept_estimate` is the point estimate under it)."""
    rows = []
    for judge in stats.judges():
        estimate = stats.judge_estimate(judge)
        errors = estimate.errors()
        rows.append(
            {
                "judge": judge,
                "known_pairs": stats.judge_truths(judge),
                "known_same": estimate.same_seen,
                "known_same_missed": estimate.same_missed,
                "known_different": estimate.different_seen,
                "known_different_accepted": estimate.different_accepted,
                "miss_rate": round(errors.miss_rate, 4),
                "false_accept_rate": round(errors.false_accept_rate, 4),
                "false_accept_estimate": round(estimate.false_accept_estimate(), 4),
                "informative": errors.informative,
            }
        )
    return rows


def export_judge_metrics(metrics: GatewayMetrics, stats: AdaptiveStats) -> None:
    """`/metrics`: per judge, the pairs of known truth it judged and its error rates."""
    labels = ("judge", "truth")
    metrics.counter_at_scrape(
        "gateway_adaptive_judge_known_pairs",
        "Pairs of known truth the judge judged: truth=same (exact repeats), "
        "truth=different (near misses refused for a hard entity mismatch).",
        labels,
        _per_truth(stats, lambda e: e.same_seen, lambda e: e.different_seen),
    )
    metrics.counter_at_scrape(
        "gateway_adaptive_judge_known_pair_errors",
        "Of those, the judge's wrong verdicts: truth=same said different (misses), "
        "truth=different said same (false accepts).",
        labels,
        _per_truth(stats, lambda e: e.same_missed, lambda e: e.different_accepted),
    )
    metrics.gauge_at_scrape(
        "gateway_adaptive_judge_error_rate",
        "The judge's error rate its verdicts are corrected with: kind=miss, "
        "kind=false_accept (the one-sided 95 % upper bound).",
        ("judge", "kind"),
        lambda: [
            row
            for judge in stats.judges()
            for errors in (stats.judge_errors(judge),)
            for row in (
                ((judge, "miss"), errors.miss_rate),
                ((judge, "false_accept"), errors.false_accept_rate),
            )
        ],
    )


def _per_truth(
    stats: AdaptiveStats,
    same: Callable[[JudgeErrorEstimate], int],
    different: Callable[[JudgeErrorEstimate], int],
) -> ScrapeReading:
    """A scrape reading of one count per judge and truth (`same`: on pairs known to be
    the same, `different`: on pairs known to differ), read from the judge's estimate."""
    return lambda: [
        row
        for judge in stats.judges()
        for row in (
            ((judge, "same"), float(same(stats.judge_estimate(judge)))),
            ((judge, "different"), float(different(stats.judge_estimate(judge)))),
        )
    ]
