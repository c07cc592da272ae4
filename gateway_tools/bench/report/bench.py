"""`gateway bench`'s report: the JSON, the markdown tables (one backend, or several side
by side) and the failures that make a run not count."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from gateway_tools.bench.constants import (
    ACCEPT_THRESHOLD,
    CLIENT_NAME,
    EXACT,
    FULL_PATH_MISS_REASONS,
    MISS,
    REDIS,
    SEMANTIC,
)
from gateway_tools.bench.formatting import fmt, fmt_counts, ranked_counts
from gateway_tools.bench.measure import Series, Throughput
from gateway_tools.bench.report.apis import api_failures, render_api_table
from gateway_tools.bench.report.common import (
    machine,
    machine_line,
    percentiles,
    write_json,
)

# Throughput runs, in the order they are measured and shown: key prefix, layer, label.
THROUGHPUT_KINDS = (
    ("hit", EXACT, "exact hits"),
    ("semantic", SEMANTIC, "semantic hits"),
    ("miss", MISS, "misses"),
)
_LABELS = {layer: label for _, layer, label in THROUGHPUT_KINDS}


def _difference(a: float | int | None, b: float | int | None) -> float | None:
    return None if a is None or b is None else round(a - b, 3)


def _ratio(a: float | int | None, b: float | int | None) -> float | None:
    return None if a is None or not b else round(a / b, 2)


def _series_summary(series: Series) -> dict[str, Any]:
    return {
        **percentiles(series.latencies_ms),
        "errors": series.errors,
        "wrong_layer": series.wrong_layer,
        "layers": ranked_counts(series.layers),
        "reasons": ranked_counts(series.reasons),
        "first_error": series.first_error,
    }


def _throughput_summary(result: Throughput) -> dict[str, Any]:
    return {
        "layer": result.layer,
        "concurrency": result.concurrency,
        "rps": round(result.rps, 1),
        "requests": result.completed,
        "seconds": round(result.seconds, 3),
        "errors": result.series.errors,
        "wrong_layer": result.series.wrong_layer,
        "layers": ranked_counts(result.series.layers),
        "reasons": ranked_counts(result.series.reasons),
        "first_error": result.series.first_error,
        "latency_ms": percentiles(result.series.latencies_ms),
    }


def _total(series: Iterable[Series], what: Callable[[Series], Counter[str]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for one in series:
        total.update(what(one))
    return total


def build_report(
    requests: int,
    direct: Series,
    miss: Series,
    hit: Series,
    semantic: Series,
    rates: Mapping[str, Throughput],
    first_seen: Series,
) -> dict[str, Any]:
    """`semantic`: one paraphrase repeated (served from the per-text memos after its
    first request); `first_seen`: paraphrases each sent once (`first_seen_hits`)."""
    direct_stats, miss_stats = percentiles(direct.latencies_ms), percentiles(miss.latencies_ms)
    by_layer = {
        layer: [*singles, *(r.series for r in rates.values() if r.layer == layer)]
        for layer, singles in ((EXACT, [hit]), (SEMANTIC, [semantic, first_seen]), (MISS, [miss]))
    }
    all_series = [direct, *(s for group in by_layer.values() for s in group)]
    wrong = {layer: sum(s.wrong_layer for s in group) for layer, group in by_layer.items()}
    miss_layers = _total(by_layer[MISS], lambda s: s.layers)
    miss_reasons = _total(by_layer[MISS], lambda s: s.reasons)
    short_path = {
        key: count
        for key, count in miss_reasons.items()
        if key.startswith(f"{MISS}/") and key.partition("/")[2] not in FULL_PATH_MISS_REASONS
    }
    similarities = [x for group in by_layer[SEMANTIC] for x in group.similarities]
    errors = sum(s.errors for s in all_series)
    short_path_misses = sum(short_path.values())
    return {
        "machine": machine(),
        "client": CLIENT_NAME,
        "requests": requests,
        "latency_ms": {
            "exact_hit": _series_summary(hit),
            "semantic_hit": _series_summary(semantic),
            "semantic_hit_first_seen": _series_summary(first_seen),
            "direct_upstream": _series_summary(direct),
            "gateway_miss": _series_summary(miss),
            "miss_overhead": {
                "p50": _difference(miss_stats["p50"], direct_stats["p50"]),
                "p99": _difference(miss_stats["p99"], direct_stats["p99"]),
                "ratio_p50": _ratio(miss_stats["p50"], direct_stats["p50"]),
                "ratio_p99": _ratio(miss_stats["p99"], direct_stats["p99"]),
            },
        },
        "semantic_similarity": {
            "min": min(similarities, default=None),
            "max": max(similarities, default=None),
        },
        "throughput": {name: _throughput_summary(r) for name, r in rates.items()},
        "errors": errors,
        "non_exact_hits": wrong[EXACT],
        "non_semantic_hits": wrong[SEMANTIC],
        "misses_not_reported_as_miss": wrong[MISS],
        # Every answer of the miss phases, by layer, and by "layer/reason".
        "miss_phase_layers": ranked_counts(miss_layers),
        "miss_phase_reasons": ranked_counts(miss_reasons),
        "short_path_misses": short_path_misses,
        "ok": errors == 0 and not any(wrong.values()) and short_path_misses == 0,
    }


def render_table(report: Mapping[str, Any]) -> str:
    host, latency = report["machine"], report["latency_ms"]
    overhead = latency["miss_overhead"]
    lines = [
        "## gateway bench",
        "",
        machine_line(host),
        f"client: {report['client']}; {report['requests']} requests per latency measurement",
        f"storage: {_describe_storage(report)}",
        "",
        "| latency (ms)            |      p50 |      p99 |    n | errors | wrong layer |",
        "|-------------------------|---------:|---------:|-----:|-------:|------------:|",
    ]
    for label, key in (
        ("exact hit (gateway)", "exact_hit"),
        ("semantic hit (gateway)", "semantic_hit"),
        ("semantic, new wording", "semantic_hit_first_seen"),
        ("direct upstream", "direct_upstream"),
        ("gateway miss", "gateway_miss"),
    ):
        row = latency[key]
        wrong = "" if key == "direct_upstream" else row["wrong_layer"]
        lines.append(
            f"| {label:<23} | {fmt(row['p50']):>8} | {fmt(row['p99']):>8} "
            f"| {row['n']:>4} | {row['errors']:>6} | {wrong:>11} |"
        )
    lines.append(
        f"| {'miss overhead (Δ)':<23} | {fmt(overhead['p50']):>8} | {fmt(overhead['p99']):>8} "
        f"|      |        |             |"
    )
    lines.append(
        f"| {'miss / direct (ratio)':<23} | {fmt(overhead['ratio_p50'], 'x'):>8} "
        f"| {fmt(overhead['ratio_p99'], 'x'):>8} |      |        |             |"
    )
    lines += [
        "",
        "| throughput    | clients |    req/s | requests | seconds | p50 ms | p99 ms | errors "
        "| wrong layer |",
        "|---------------|--------:|---------:|---------:|--------:|-------:|-------:|-------:"
        "|------------:|",
    ]
    for row in report["throughput"].values():
        lines.append(
            f"| {_LABELS.get(row['layer'], row['layer']):<13} | {row['concurrency']:>7} "
            f"| {row['rps']:>8.1f} | {row['requests']:>8} | {row['seconds']:>7.2f} "
            f"| {fmt(row['latency_ms']['p50']):>6} | {fmt(row['latency_ms']['p99']):>6} "
            f"| {row['errors']:>6} | {row['wrong_layer']:>11} |"
        )
    similarity = report["semantic_similarity"]
    lines += [
        "",
        f"semantic hits served at similarity {fmt(similarity['min'])}"
        f"-{fmt(similarity['max'])} (calibrated; accept threshold {ACCEPT_THRESHOLD})",
        f"miss phases answered as: {fmt_counts(report['miss_phase_layers'])}; "
        f"reasons: {fmt_counts(report['miss_phase_reasons'])}",
        f"errors: {report['errors']}, non-exact hits: {report['non_exact_hits']}, "
        f"non-semantic hits: {report['non_semantic_hits']}, "
        f"misses not reported as miss: {report['misses_not_reported_as_miss']}, "
        f"misses that skipped a stage: {report['short_path_misses']}, "
        f"store failures: {fmt(report['storage']['failures'])}",
    ]
    if "apis" in report:
        lines += ["", *render_api_table(report["apis"])]
    if (host["cpu_count"] or 0) < 4:
        lines.append(
            "note: the client, the gateway and the upstream share these few CPUs; "
            "c=16 throughput is bounded by that, not by the gateway alone."
        )
    return "\n".join(lines)


def _describe_storage(report: Mapping[str, Any]) -> str:
    storage = report["storage"]
    if storage["backend"] == REDIS:
        return (
            f"redis (Redis 8 + RediSearch on loopback, started by the bench; "
            f"{storage['redis_timeout_seconds']} s per operation)"
        )
    return f"{storage['backend']} (SQLite + in-process vectors, in a temporary directory)"


# Side-by-side rows: label, and how to get the value out of one backend's report.
_LATENCY_ROWS: tuple[tuple[str, str, str], ...] = (
    ("exact hit p50", "exact_hit", "p50"),
    ("exact hit p99", "exact_hit", "p99"),
    ("semantic hit p50", "semantic_hit", "p50"),
    ("semantic hit p99", "semantic_hit", "p99"),
    ("semantic hit, new wording p50", "semantic_hit_first_seen", "p50"),
    ("semantic hit, new wording p99", "semantic_hit_first_seen", "p99"),
    ("direct upstream p50", "direct_upstream", "p50"),
    ("direct upstream p99", "direct_upstream", "p99"),
    ("gateway miss p50", "gateway_miss", "p50"),
    ("gateway miss p99", "gateway_miss", "p99"),
    ("miss overhead p50 (Δ)", "miss_overhead", "p50"),
    ("miss overhead p99 (Δ)", "miss_overhead", "p99"),
)


def _side_by_side(
    title: str, names: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]]
) -> list[str]:
    """A markdown table: one row per metric, one column per backend."""
    first = max(len(title), *(len(label) for label, _ in rows))
    widths = [
        max(len(name), 9, *(len(cells[i]) for _, cells in rows)) for i, name in enumerate(names)
    ]
    lines = [
        f"| {title:<{first}} | "
        + " | ".join(f"{n:>{w}}" for n, w in zip(names, widths, strict=True))
        + " |",
        f"|{'-' * (first + 2)}|" + "|".join(f"{'-' * (w + 1)}:" for w in widths) + "|",
    ]
    for label, cells in rows:
        lines.append(
            f"| {label:<{first}} | "
            + " | ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))
            + " |"
        )
    return lines


def render_comparison(reports: Mapping[str, Mapping[str, Any]]) -> str:
    """The backends side by side, then each backend's own full table."""
    names = list(reports)
    first = reports[names[0]]
    latency_rows = [
        (label, [fmt(reports[n]["latency_ms"][key][stat]) for n in names])
        for label, key, stat in _LATENCY_ROWS
    ]
    throughput_rows = [
        (
            f"{_LABELS.get(row['layer'], row['layer'])}, c={row['concurrency']}",
            [f"{reports[n]['throughput'][key]['rps']:.1f}" for n in names],
        )
        for key, row in first["throughput"].items()
    ]
    check_rows: list[tuple[str, list[str]]] = [
        ("request errors", [str(reports[n]["errors"]) for n in names]),
        (
            "answers from another layer",
            [
                str(
                    reports[n]["non_exact_hits"]
                    + reports[n]["non_semantic_hits"]
                    + reports[n]["misses_not_reported_as_miss"]
                )
                for n in names
            ],
        ),
        ("misses that skipped a stage", [str(reports[n]["short_path_misses"]) for n in names]),
        ("store failures", [fmt(reports[n]["storage"]["failures"]) for n in names]),
        (
            "semantic hit similarity",
            [fmt(reports[n]["semantic_similarity"]["min"]) for n in names],
        ),
    ]
    lines = [
        f"## gateway bench: {' vs '.join(names)}",
        "",
        machine_line(first["machine"]),
        f"client: {first['client']}; {first['requests']} requests per latency measurement",
        f"miss prompts: seed {first['miss_prompts']['seed']}, the same for every backend; "
        "the backends ran one after the other, each with a fresh upstream, gateway and store",
        *(f"{n}: {_describe_storage(reports[n])}" for n in names),
        "",
        *_side_by_side("latency (ms)", names, latency_rows),
        "",
        *_side_by_side("throughput (req/s)", names, throughput_rows),
        "",
        *_side_by_side("checks", names, check_rows),
    ]
    for name in names:
        lines += ["", f"### {name}", "", render_table(reports[name]).split("\n", 2)[2]]
    return "\n".join(lines)


def _failures(report: Mapping[str, Any]) -> list[str]:
    """Why a backend's run does not count (empty when it does)."""
    failures = []
    if report["errors"]:
        failures.append(f"{report['errors']} request errors")
    if report["non_exact_hits"]:
        failures.append(
            f"{report['non_exact_hits']} exact-hit requests were not served by the exact "
            "cache (x-gateway-cache != exact)"
        )
    if report["non_semantic_hits"]:
        failures.append(
            f"{report['non_semantic_hits']} semantic-hit requests were not served by the "
            "semantic cache (x-gateway-cache != semantic)"
        )
    if report["misses_not_reported_as_miss"]:
        reasons = report["miss_phase_reasons"]
        others = {k: v for k, v in report["miss_phase_layers"].items() if k != MISS}
        why = {k: v for k, v in reasons.items() if not k.startswith(f"{MISS}/")}
        failures.append(
            f"{report['misses_not_reported_as_miss']} miss-phase requests were answered by "
            f"another layer ({fmt_counts(others)}; reasons: {fmt_counts(why)}): the miss "
            "latencies do not measure the miss path"
        )
    if report["short_path_misses"]:
        failures.append(
            f"{report['short_path_misses']} misses skipped a stage (reasons: "
            f"{fmt_counts(report['miss_phase_reasons'])}): the miss latencies understate "
            "the path"
        )
    storage = report["storage"]
    if storage["failures"]:
        failures.append(
            f"{storage['failures']} {storage['backend']} operations failed during the run "
            f"(last error: {storage['last_error']}); the gateway served those from the "
            "fail-open fallback"
        )
    if not storage["available"]:
        failures.append(f"the {storage['backend']} storage was unavailable after the run")
    if "apis" in report:
        failures += api_failures(report["apis"])
    return failures


def finish(reports: Mapping[str, dict[str, Any]], output: str | None) -> int:
    """Print the table(s) and the failures; write the JSON. One backend: its report, as
    before; several: `{"backends": {name: report}, "ok": ...}` and a side-by-side table."""
    if len(reports) == 1:
        (result,) = reports.values()
        print(render_table(result), flush=True)
    else:
        first = next(iter(reports.values()))
        result = {
            "machine": first["machine"],
            "client": first["client"],
            "requests": first["requests"],
            "miss_prompts_seed": first["miss_prompts"]["seed"],
            "backends": dict(reports),
            "ok": all(report["ok"] for report in reports.values()),
        }
        print(render_comparison(reports), flush=True)
    if output:
        write_json(output, result)
    for name, report in reports.items():
        for failure in _failures(report):
            prefix = f"{name}: " if len(reports) > 1 else ""
            print(f"FAIL: {prefix}{failure}", file=sys.stderr)
    return 0 if result["ok"] else 1
