"""The load benchmark's markdown tables: throughput and latency, CPU per request, and the
verdicts. Rows must carry the fields of `load_ratios.add_ratios`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gateway_tools.bench.formatting import fmt
from gateway_tools.bench.report.load_verdicts import MET, NOT_MEASURED, all_met

_THROUGHPUT_HEADER = (
    "| c | target | req/s | × LiteLLM | of floor | p50 ms | p99 ms | p50 over floor "
    "| p99 over floor | errors | unexpected layer | cache hits |"
)
_THROUGHPUT_RULE = "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
_CPU_HEADER = (
    "| c | target | server CPU ms/req | × LiteLLM | upstream CPU ms/req | Redis CPU ms/req "
    "| server CPU s | client CPU s | other CPU s | peak RSS MiB |"
)
_CPU_RULE = "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|"
_VERDICT_HEADER = "| target of issue 21 | gateway | measured | verdict |"
_VERDICT_RULE = "|---|---|---|---|"
DASH = "—"


def _ratio(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}×"


def _percent(value: float | None) -> str:
    return DASH if value is None else f"{value * 100:.0f} %"


def _added_ms(value: float | None) -> str:
    # The precision of `fmt`, which prints the latencies themselves.
    if value is None:
        return DASH
    return f"{value:+.3f}" if abs(value) < 100 else f"{value:+.1f}"


def _cell(value: Any) -> str:
    return DASH if value is None else fmt(value)


def ordered(
    rows: Sequence[Mapping[str, Any]], workload: str, targets: Sequence[str]
) -> list[Mapping[str, Any]]:
    """The rows of one workload: concurrency ascending, targets in the order given."""
    target_rank = {name: i for i, name in enumerate(targets)}
    chosen = [r for r in rows if r["workload"] == workload]
    return sorted(chosen, key=lambda r: (r["concurrency"], target_rank[r["target"]]))


def _where(row: Mapping[str, Any]) -> str:
    return f"| {row['concurrency']} | {row['target']} "


def throughput_table(
    rows: Sequence[Mapping[str, Any]], workload: str, targets: Sequence[str]
) -> list[str]:
    """One workload's req/s and latency, each against the proxy and the floor; errors
    and cache hits."""
    lines = [_THROUGHPUT_HEADER, _THROUGHPUT_RULE]
    for row in ordered(rows, workload, targets):
        latency = row["latency_ms"]
        lines.append(
            f"{_where(row)}| {row['rps']:.1f} | {_ratio(row['rps_vs_litellm'])} "
            f"| {_percent(row['rps_share_of_floor'])} | {_cell(latency['p50'])} "
            f"| {_cell(latency['p99'])} | {_added_ms(row['p50_added_ms'])} "
            f"| {_added_ms(row['p99_added_ms'])} | {row['errors']} "
            f"| {row['unexpected_layer']} | {_percent(row['hit_share'])} |"
        )
    return lines


def cpu_table(
    rows: Sequence[Mapping[str, Any]], workload: str, targets: Sequence[str]
) -> list[str]:
    """One workload's CPU per request of the server (against the proxy's), its upstream
    and Redis."""
    lines = [_CPU_HEADER, _CPU_RULE]
    for row in ordered(rows, workload, targets):
        lines.append(
            f"{_where(row)}| {_cell(row['server_cpu_ms_per_request'])} "
            f"| {_ratio(row['cpu_per_request_vs_litellm'])} "
            f"| {_cell(row['upstream_cpu_ms_per_request'])} "
            f"| {_cell(row['redis_cpu_ms_per_request'])} | {_cell(row['server_cpu_seconds'])} "
            f"| {_cell(row['client_cpu_seconds'])} | {_cell(row['other_cpu_seconds'])} "
            f"| {row['server_peak_rss_mib']:.0f} |"
        )
    return lines


def _value(metric: str, value: float | None) -> str:
    if value is None:
        return "not measured"
    return f"{value:.3f} ms" if metric.endswith("_ms_per_request") else f"{value:.2f}×"


def verdict_table(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per goal and gateway, the value at each concurrency it needs."""
    lines = [_VERDICT_HEADER, _VERDICT_RULE]
    for result in results:
        measured = ", ".join(
            f"c={c}: {_value(result['metric'], v)}" for c, v in result["values"].items()
        )
        status = result["status"]
        shown = status if status == NOT_MEASURED else f"**{status}**"
        lines.append(f"| {result['text']} | {result['target']} | {measured or DASH} | {shown} |")
    return lines


def verdict_summary(results: Sequence[Mapping[str, Any]]) -> str:
    met = sum(1 for r in results if r["status"] == MET)
    undecided = sum(1 for r in results if r["status"] == NOT_MEASURED)
    answer = "yes" if all_met(results) else "no"
    return (
        f"all targets met: {answer} ({met} of {len(results)} met, "
        f"{undecided} not measured in this run)"
    )
