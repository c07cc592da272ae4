"""The report of `benchmarks/memory_load.py`: one summary per kind and backend, and
the markdown table that sets the backends side by side."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from gateway_tools.bench.memory_load.phases import MEMORY_UNAVAILABLE, KindSeries
from gateway_tools.bench.memory_load.scenario import NEITHER_KIND, NO_USER_HIT, SESSION_SUFFIX

# Stages of the decision record's `stages_ms` the table shows: the whole memory stage
# and the parts of it that are timed on their own.
MEMORY_STAGE = "memory"
EMBED_PART = "memory_embed"
MEMORY_PARTS = (EMBED_PART, "memory_retrieve", "memory_inject")


def quantiles_ms(values: Sequence[float]) -> dict[str, float | int | None]:
    """p50, p95 and p99 (inclusive method) in ms, rounded to µs; None when empty."""
    if not values:
        return {"p50": None, "p95": None, "p99": None, "n": 0}
    if len(values) == 1:
        only = round(values[0], 3)
        return {"p50": only, "p95": only, "p99": only, "n": 1}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {
        "p50": round(statistics.median(values), 3),
        "p95": round(cuts[94], 3),
        "p99": round(cuts[98], 3),
        "n": len(values),
    }


def summarise(series: KindSeries) -> dict[str, Any]:
    """What the table and the JSON show of one kind."""
    memory = quantiles_ms(series.stage_ms(MEMORY_STAGE))
    # Per request: on a miss the semantic lookup reuses the query embedding, so the
    # stage without it is what memory adds to the path.
    without_embedding = [
        whole - embed
        for whole, embed in zip(
            series.stage_ms(MEMORY_STAGE), series.stage_ms(EMBED_PART), strict=True
        )
    ]
    items = series.field_values("memory_items")
    return {
        "requests": len(series.latencies_ms),
        "records": len(series.records),
        "errors": series.errors,
        "wrong_layer": series.wrong_layer,
        "reconnects": series.reconnects,
        "memory_unavailable": sum(
            1 for r in series.records.values() if r.get("memory_note") == MEMORY_UNAVAILABLE
        ),
        "first_error": series.first_error,
        "layers": dict(series.layers.most_common()),
        "end_to_end_ms": quantiles_ms(list(series.latencies_ms.values())),
        "memory_stage_ms": memory,
        "memory_without_embedding_ms": quantiles_ms(without_embedding),
        "memory_parts_p50_ms": {
            part: quantiles_ms(series.stage_ms(part))["p50"] for part in MEMORY_PARTS
        },
        "injected_items_mean": round(statistics.fmean(items), 2) if items else None,
    }


def with_differences(kinds: Mapping[str, dict[str, Any]], reference: str) -> None:
    """Each kind's end-to-end p50 minus the reference kind's, in place (`added_p50_ms`).
    A session kind is compared with the reference sent with a session."""
    for name, summary in kinds.items():
        base_name = reference + SESSION_SUFFIX if name.endswith(SESSION_SUFFIX) else reference
        base = kinds.get(base_name, {}).get("end_to_end_ms", {}).get("p50")
        own = summary["end_to_end_ms"]["p50"]
        summary["added_p50_ms"] = None if base is None or own is None else round(own - base, 3)


def failures(report: Mapping[str, Any]) -> list[str]:
    """Requests that failed, or were answered by another path than their phase's."""
    lines: list[str] = []
    for backend, result in report["backends"].items():
        for phase in ("misses", "hits"):
            for name, summary in result[phase].items():
                if summary["errors"] or summary["wrong_layer"]:
                    lines.append(
                        f"{backend} {phase} {name}: {summary['errors']} errors "
                        f"({summary['first_error']}), {summary['wrong_layer']} on another "
                        f"path (layers: {summary['layers']})"
                    )
                if summary["memory_unavailable"]:
                    lines.append(
                        f"{backend} {phase} {name}: the memory stage failed open "
                        f"{summary['memory_unavailable']} times (forwarded without memory)"
                    )
                if summary["records"] < summary["requests"]:
                    lines.append(
                        f"{backend} {phase} {name}: only {summary['records']} of "
                        f"{summary['requests']} decision records read back"
                    )
    return lines


def _cell(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _row(name: str, per_backend: Sequence[Mapping[str, Any]]) -> str:
    cells = [name]
    for summary in per_backend:
        memory = summary["memory_stage_ms"]
        cells += [
            _cell(memory["p50"]),
            _cell(memory["p95"]),
            _cell(memory["p99"]),
            _cell(summary["memory_without_embedding_ms"]["p50"]),
            _cell(summary["end_to_end_ms"]["p50"]),
            _cell(summary["injected_items_mean"], 1),
        ]
    return "| " + " | ".join(cells) + " |"


def render(report: Mapping[str, Any]) -> str:
    """Two markdown tables: misses (memory stage, end to end, what memory adds) and
    exact hits; a column group per backend."""
    backends = list(report["backends"])
    setup = report["setup"]
    lines = [
        f"memory load: {setup['knowledge_items']} knowledge items in one tenant, "
        f"{setup['memories']} memories for one user; {setup['requests']} requests per kind; "
        f"{report['machine']['cpu_count']} CPUs",
        "",
        "Misses (forwarded requests, each a new question): the gateway's own timing of the "
        "memory stage (decision record `stages_ms.memory`), and end-to-end p50",
        "",
    ]
    head = ["kind"]
    for backend in backends:
        head += [f"{backend} memory p50", "p95", "p99", "w/o embed p50", "e2e p50", "items"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in report["backends"][backends[0]]["misses"]:
        per = [report["backends"][b]["misses"][name] for b in backends]
        lines.append(_row(name, per))
    lines += ["", f"End-to-end p50 added over `{NEITHER_KIND}` (ms; same session mode):", ""]
    head = ["kind", *backends]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in report["backends"][backends[0]]["misses"]:
        cells = [_cell(report["backends"][b]["misses"][name]["added_p50_ms"]) for b in backends]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    lines += ["", "Exact hits (p50 ms end to end; memory stage p50 from the record):", ""]
    head = ["hit by"]
    for backend in backends:
        head += [f"{backend} e2e p50", "vs no user", "memory p50", "w/o embed p50"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in report["backends"][backends[0]]["hits"]:
        cells = [name]
        for backend in backends:
            hits = report["backends"][backend]["hits"]
            own = hits[name]["end_to_end_ms"]["p50"]
            base = hits[NO_USER_HIT]["end_to_end_ms"]["p50"]
            added = None if own is None or base is None else f"+{own - base:.2f}"
            cells += [
                _cell(own),
                _cell(added),
                _cell(hits[name]["memory_stage_ms"]["p50"]),
                _cell(hits[name]["memory_without_embedding_ms"]["p50"]),
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
