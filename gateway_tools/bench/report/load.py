"""The load benchmark's rows: one per phase (and target), and one of several rounds.

What is derived from them is in `load_ratios` and `load_verdicts`; the tables and the
report in `load_tables` and `load_render`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gateway_tools.bench.formatting import ranked_counts
from gateway_tools.bench.phases import PhaseStats
from gateway_tools.bench.procstats import MIB
from gateway_tools.bench.report.common import percentiles
from gateway_tools.bench.targets import Target


@dataclass(frozen=True, slots=True)
class Usage:
    """What one phase cost, per process (CPU seconds) and the server's peak memory."""

    server_cpu: float
    upstream_cpu: float | None
    redis_cpu: float | None
    client_cpu: float
    # Every other process of the machine (other servers idle, anything else running).
    other_cpu: float
    peak_rss_bytes: int
    rss_bytes: int
    # False if the kernel refused to reset the peak: it is then the peak since start.
    peak_is_per_phase: bool


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _hit_share(target: Target, stats: PhaseStats) -> float | None:
    if not target.caches or not stats.completed:
        return None
    hits = sum(n for key, n in stats.answers.items() if key.split("/")[1] in target.hit_layers)
    return round(hits / stats.completed, 4)


def phase_row(
    target: Target, workload: str, concurrency: int, stats: PhaseStats, usage: Usage
) -> dict[str, Any]:
    completed = stats.completed
    return {
        "workload": workload,
        "concurrency": concurrency,
        "target": target.name,
        "rps": round(stats.rps, 1),
        "requests": completed,
        "seconds": round(stats.seconds, 3),
        "latency_ms": percentiles(stats.latencies_ms),
        "errors": stats.errors,
        "first_error": stats.first_error,
        "unexpected_layer": stats.unexpected,
        "first_unexpected": stats.first_unexpected,
        "hit_share": _hit_share(target, stats),
        "answers": ranked_counts(stats.answers),  # "kind/layer"
        "reasons": ranked_counts(stats.reasons),  # "kind/layer/reason" (gateway)
        "server_cpu_seconds": _round(usage.server_cpu),
        "server_cpu_ms_per_request": _round(usage.server_cpu * 1000 / completed)
        if completed
        else None,
        "server_peak_rss_mib": round(usage.peak_rss_bytes / MIB, 1),
        "server_rss_mib_after": round(usage.rss_bytes / MIB, 1),
        "peak_rss_is_per_phase": usage.peak_is_per_phase,
        "upstream_cpu_seconds": _round(usage.upstream_cpu),
        "redis_cpu_seconds": _round(usage.redis_cpu),
        "client_cpu_seconds": _round(usage.client_cpu),
        "other_cpu_seconds": _round(usage.other_cpu),
    }


def combine_rounds(rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One row for a (workload, concurrency, target) measured in several rounds: the
    round with the median req/s (so every column comes from one real measurement), with
    errors and unexpected answers summed over all rounds and each round's numbers kept."""
    ordered = sorted(rounds, key=lambda row: row["rps"])
    row = dict(ordered[(len(ordered) - 1) // 2])
    row["errors"] = sum(r["errors"] for r in rounds)
    row["unexpected_layer"] = sum(r["unexpected_layer"] for r in rounds)
    row["first_error"] = next((r["first_error"] for r in rounds if r["first_error"]), None)
    row["first_unexpected"] = next(
        (r["first_unexpected"] for r in rounds if r["first_unexpected"]), None
    )
    row["requests_all_rounds"] = sum(r["requests"] for r in rounds)
    row["server_peak_rss_mib"] = max(r["server_peak_rss_mib"] for r in rounds)
    row["rounds"] = [
        {"rps": r["rps"], "p50_ms": r["latency_ms"]["p50"], "p99_ms": r["latency_ms"]["p99"]}
        for r in rounds
    ]
    return row
