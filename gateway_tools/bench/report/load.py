"""The load benchmark's rows, its markdown table and the gateway/LiteLLM comparison."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gateway_tools.bench.formatting import fmt, ranked_counts
from gateway_tools.bench.phases import PhaseStats
from gateway_tools.bench.procstats import MIB
from gateway_tools.bench.report.common import percentiles
from gateway_tools.bench.targets import Target

LITELLM_NAME = "litellm-proxy"


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


def _index(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, int, str], Mapping[str, Any]]:
    return {(r["workload"], r["concurrency"], r["target"]): r for r in rows}


def add_litellm_ratios(rows: Sequence[dict[str, Any]]) -> None:
    """Each row's req/s over the LiteLLM proxy's in the same workload and concurrency."""
    by_key = _index(rows)
    for row in rows:
        base = by_key.get((row["workload"], row["concurrency"], LITELLM_NAME))
        row["rps_vs_litellm"] = (
            round(row["rps"] / base["rps"], 2) if base is not None and base["rps"] else None
        )


def comparison(
    rows: Sequence[Mapping[str, Any]], gateways: Sequence[str], workloads: Sequence[str]
) -> dict[str, Any]:
    """Per gateway backend and workload: faster than the proxy at every concurrency
    (more req/s AND a lower p50)? And the exact-hit req/s ratio at concurrency 16."""
    by_key = _index(rows)
    result: dict[str, Any] = {}
    for gateway in gateways:
        per_workload: dict[str, Any] = {}
        for workload in workloads:
            pairs = [
                (row, by_key.get((workload, row["concurrency"], LITELLM_NAME)))
                for (w, _, name), row in by_key.items()
                if w == workload and name == gateway
            ]
            verdicts = [_faster(g, lite) for g, lite in pairs if lite is not None]
            per_workload[workload] = all(verdicts) if verdicts else None
        exact16 = by_key.get(("exact", 16, gateway))
        result[gateway] = {
            "faster_than_litellm": per_workload,
            "exact_c16_rps_ratio": exact16.get("rps_vs_litellm") if exact16 else None,
        }
    return result


def _faster(gateway: Mapping[str, Any], litellm: Mapping[str, Any]) -> bool:
    g50, l50 = gateway["latency_ms"]["p50"], litellm["latency_ms"]["p50"]
    return bool(
        gateway["rps"] > litellm["rps"] and g50 is not None and l50 is not None and g50 < l50
    )


_HEADER = (
    "| workload | c | target | req/s | × LiteLLM | p50 ms | p99 ms | errors | unexpected layer "
    "| cache hits | server CPU s | CPU ms/req | peak RSS MiB | upstream CPU s | redis CPU s "
    "| client CPU s | other CPU s |"
)
_RULE = "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f} %"


def _ratio(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}×"


def _cell(value: Any, suffix: str = "") -> str:
    return "—" if value is None else fmt(value, suffix)


def table(
    rows: Sequence[Mapping[str, Any]], workloads: Sequence[str], targets: Sequence[str]
) -> list[str]:
    """One row per (workload, concurrency, target), in the order of the arguments."""
    workload_rank = {name: i for i, name in enumerate(workloads)}
    target_rank = {name: i for i, name in enumerate(targets)}

    def position(row: Mapping[str, Any]) -> tuple[int, int, int]:
        return workload_rank[row["workload"]], row["concurrency"], target_rank[row["target"]]

    lines = [_HEADER, _RULE]
    for row in sorted(rows, key=position):
        latency = row["latency_ms"]
        lines.append(
            f"| {row['workload']} | {row['concurrency']} | {row['target']} | {row['rps']:.1f} "
            f"| {_ratio(row['rps_vs_litellm'])} | {_cell(latency['p50'])} "
            f"| {_cell(latency['p99'])} | {row['errors']} | {row['unexpected_layer']} "
            f"| {_percent(row['hit_share'])} | {_cell(row['server_cpu_seconds'])} "
            f"| {_cell(row['server_cpu_ms_per_request'])} | {row['server_peak_rss_mib']:.0f} "
            f"| {_cell(row['upstream_cpu_seconds'])} | {_cell(row['redis_cpu_seconds'])} "
            f"| {_cell(row['client_cpu_seconds'])} | {_cell(row['other_cpu_seconds'])} |"
        )
    return lines


def summary_lines(result: Mapping[str, Any]) -> list[str]:
    lines = []
    for gateway, verdict in result["comparison"].items():
        faster = ", ".join(
            f"{w} {'yes' if ok else 'no' if ok is not None else 'n/a'}"
            for w, ok in verdict["faster_than_litellm"].items()
        )
        lines.append(
            f"{gateway} faster than the LiteLLM proxy (more req/s and lower p50 at every "
            f"concurrency): {faster}; exact-hit req/s at c=16: "
            f"{_ratio(verdict['exact_c16_rps_ratio'], 2)} the proxy's (target ≥ 5×)"
        )
    return lines
