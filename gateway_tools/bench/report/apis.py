"""The per-API part of `gateway bench`'s report (`--apis`): one row per API, and each
API's difference to chat completions (`REFERENCE_API`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gateway_tools.bench.api_compare import ApiComparison
from gateway_tools.bench.apis import APIS, REFERENCE_API
from gateway_tools.bench.formatting import fmt
from gateway_tools.bench.measure import Series
from gateway_tools.bench.report.common import percentiles


def _difference(a: float | int | None, b: float | int | None) -> float | None:
    return None if a is None or b is None else round(a - b, 3)


def _ratio(a: float | int | None, b: float | int | None) -> float | None:
    return None if a is None or not b else round(a / b, 2)


def _latency(series: Series) -> dict[str, Any]:
    return {
        **percentiles(series.latencies_ms),
        "errors": series.errors,
        "wrong_layer": series.wrong_layer,
        "first_error": series.first_error,
    }


def api_row(
    name: str, hits: Series, misses: Series, direct: Mapping[str, Any], hit_rps: float
) -> dict[str, Any]:
    """One API's numbers; `direct`: the percentiles of the upstream called directly."""
    hit, miss = _latency(hits), _latency(misses)
    return {
        "api": name,
        "path": APIS[name].path,
        "exact_hit": hit,
        "gateway_miss": miss,
        "miss_overhead": {
            "p50": _difference(miss["p50"], direct["p50"]),
            "p99": _difference(miss["p99"], direct["p99"]),
        },
        "exact_hits_per_second": round(hit_rps, 1),
    }


def with_reference(rows: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each row with `vs_chat`: how much slower (ms, positive: slower) or how many times
    as fast (hits/s) as chat completions; None where chat was not measured."""
    reference = rows.get(REFERENCE_API)
    out: dict[str, dict[str, Any]] = {}
    for name, row in rows.items():
        ref_hit = reference["exact_hit"] if reference else {}
        ref_overhead = reference["miss_overhead"] if reference else {}
        ref_rps = reference["exact_hits_per_second"] if reference else None
        out[name] = {
            **row,
            "vs_chat": {
                "exact_hit_p50_ms": _difference(row["exact_hit"]["p50"], ref_hit.get("p50")),
                "exact_hit_p99_ms": _difference(row["exact_hit"]["p99"], ref_hit.get("p99")),
                "miss_overhead_p50_ms": _difference(
                    row["miss_overhead"]["p50"], ref_overhead.get("p50")
                ),
                "exact_hits_per_second_ratio": _ratio(row["exact_hits_per_second"], ref_rps),
            },
        }
    return out


def build_api_section(comparison: ApiComparison) -> dict[str, Any]:
    direct = _latency(comparison.direct)
    rows = {
        name: api_row(name, one.hits, one.misses, direct, one.hit_throughput.rps)
        for name, one in comparison.apis.items()
    }
    all_series = [comparison.direct] + [
        s
        for one in comparison.apis.values()
        for s in (one.hits, one.misses, one.hit_throughput.series)
    ]
    return {
        "reference": REFERENCE_API,
        "concurrency": comparison.concurrency,
        "direct_upstream": direct,
        "rows": with_reference(rows),
        "errors": sum(s.errors for s in all_series),
        "wrong_layer": sum(s.wrong_layer for s in all_series),
    }


def render_api_table(section: Mapping[str, Any]) -> list[str]:
    """The markdown table, one row per API (Δ: minus chat's, in ms)."""
    concurrency = section["concurrency"]
    lines = [
        f"per API (taking turns in every round; Δ = minus {section['reference']}; "
        f"direct upstream p50 {fmt(section['direct_upstream']['p50'])} ms):",
        "",
        "| API         | hit p50 | hit p99 | Δ hit p50 | miss overhead p50 | miss overhead p99 "
        f"| Δ overhead p50 | hits/s c={concurrency:<2} | × chat | errors | wrong layer |",
        "|-------------|--------:|--------:|----------:|------------------:|------------------:"
        "|---------------:|------------:|-------:|-------:|------------:|",
    ]
    for row in section["rows"].values():
        versus, hit, overhead = row["vs_chat"], row["exact_hit"], row["miss_overhead"]
        errors = hit["errors"] + row["gateway_miss"]["errors"]
        wrong = hit["wrong_layer"] + row["gateway_miss"]["wrong_layer"]
        lines.append(
            f"| {row['api']:<11} | {fmt(hit['p50']):>7} | {fmt(hit['p99']):>7} "
            f"| {fmt(versus['exact_hit_p50_ms']):>9} | {fmt(overhead['p50']):>17} "
            f"| {fmt(overhead['p99']):>17} | {fmt(versus['miss_overhead_p50_ms']):>14} "
            f"| {row['exact_hits_per_second']:>11.1f} "
            f"| {fmt(versus['exact_hits_per_second_ratio'], 'x'):>6} "
            f"| {errors:>6} | {wrong:>11} |"
        )
    return lines


def api_failures(section: Mapping[str, Any]) -> list[str]:
    failures = []
    if section["errors"]:
        failures.append(f"{section['errors']} request errors in the per-API phases")
    if section["wrong_layer"]:
        failures.append(
            f"{section['wrong_layer']} per-API answers came from another layer than their "
            "phase measures"
        )
    return failures
