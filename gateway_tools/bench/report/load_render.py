"""The load benchmark's report: what `benchmarks/load.py` prints, and the block of the
README's Benchmark section, both from one result (the `--output` JSON has every field).

`derive` recomputes the ratios and the verdicts from the rows, so a result read back
from JSON renders the same report as the run that wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from gateway_tools.bench.formatting import fmt_counts
from gateway_tools.bench.report.common import machine_line
from gateway_tools.bench.report.load_ratios import add_ratios
from gateway_tools.bench.report.load_tables import (
    cpu_table,
    throughput_table,
    verdict_summary,
    verdict_table,
)
from gateway_tools.bench.report.load_verdicts import ELSEWHERE, gateways_of, verdicts
from gateway_tools.bench.report.readme_block import rewrite_file

# The defaults of `benchmarks/load.py`; the README block names only the options that differ.
DEFAULT_WARMUP_SECONDS = 1.0
DEFAULT_CONCURRENCY = "1,16,64"
DEFAULT_WORKLOADS = "exact,miss,mix"

THROUGHPUT_LEGEND = (
    '"× LiteLLM": req/s over the LiteLLM proxy\'s at the same workload and concurrency; '
    '"of floor": req/s as a share of the fake upstream called directly (the floor); '
    '"over floor": ms added to the floor\'s p50 / p99; "cache hits": share of answers '
    "from a cache layer"
)
CPU_LEGEND = (
    "CPU per answered request, from /proc over each phase: of the server process alone, "
    'then of its fake upstream and (gateway-redis) Redis; "× LiteLLM": the server\'s CPU '
    'per request over the proxy\'s (below 1: less CPU per request); "other CPU s": the '
    "rest of the machine (idle targets, unrelated work)"
)

NOT_COUNTED = (
    "**this run does not count**: a request failed, was answered from an unexpected "
    "layer, or a Redis operation failed (see the errors and unexpected-layer columns)"
)


def target_names(result: Mapping[str, Any]) -> list[str]:
    """The run's targets in the order it started them."""
    return list(result["targets"])


def derive(result: dict[str, Any]) -> dict[str, Any]:
    """Adds the ratios to every row and the verdicts to the result (in place)."""
    add_ratios(result["rows"])
    result["verdicts"] = verdicts(result["rows"], gateways_of(target_names(result)))
    return result


def store_failures(targets: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """Redis operations that failed during the run, per gateway (none: not listed)."""
    failures = {}
    for name, state in targets.items():
        start, end = state.get("storage_at_start"), state.get("storage_at_end")
        if start and end and "failures_total" in end:
            count = int(end["failures_total"]) - int(start.get("failures_total", 0))
            if count:
                failures[name] = count
    return failures


def machine_busy_note(rows: Sequence[Mapping[str, Any]], duration: float, cpus: int) -> str:
    other = [r["other_cpu_seconds"] / duration for r in rows if r["other_cpu_seconds"] is not None]
    busy = sum(other) / len(other) if other else 0.0
    return (
        f"other work on the machine used {busy:.2f} of its {cpus} CPUs on average during the "
        'phases ("other CPU s": all CPU time of the machine minus the target\'s server, '
        "upstream, Redis and the client)"
    )


def notes(rows: Sequence[Mapping[str, Any]], duration: float, cpus: int) -> list[str]:
    return [
        machine_busy_note(rows, duration, cpus),
        f"machine: {cpus} CPUs, shared by the load client, the server under test, its fake "
        "upstream and (gateway-redis) Redis: every number is bounded by that, not by one "
        "server alone; the CPU columns say where the time went",
        "every server is one process (the proxy runs one uvicorn worker, its default); the "
        "gateway and the proxy both log at warning level, without access log",
        "LiteLLM proxy: in-memory cache of 200 entries, oldest evicted first (litellm's "
        "fixed default): in the mix, repeats whose question was evicted are misses, "
        "counted in its cache-hit share and not as unexpected",
        "peak RSS: the server process's VmHWM, reset before each phase",
        "with --rounds N: each row is the round with the median req/s (errors summed over "
        "all rounds; every round's req/s, p50 and p99 are in the JSON output under `rounds`)",
    ]


def _workload_tables(result: Mapping[str, Any]) -> list[str]:
    rows, names = result["rows"], target_names(result)
    lines = [f"Throughput and latency: {THROUGHPUT_LEGEND}.", "", f"{CPU_LEGEND}.", ""]
    for workload, description in result["settings"]["workloads"].items():
        lines += [
            f"**{workload}**: {description}",
            "",
            *throughput_table(rows, workload, names),
            "",
            *cpu_table(rows, workload, names),
            "",
        ]
    return lines


def _tables(result: Mapping[str, Any]) -> list[str]:
    return [
        *_workload_tables(result),
        "**Against the targets of issue 21**",
        "",
        *verdict_table(result["verdicts"]),
        "",
        # Separate paragraphs: single lines would run together in rendered markdown.
        verdict_summary(result["verdicts"]),
        *(f"\nnot measured here: {text}" for text in ELSEWHERE),
        *([] if result.get("ok", True) else [f"\n{NOT_COUNTED}"]),
    ]


def render(result: Mapping[str, Any]) -> str:
    """The report `load.py` prints (markdown; progress went to stderr)."""
    settings = result["settings"]
    lines = [
        "## load benchmark: gateway vs upstream vs LiteLLM proxy",
        "",
        machine_line(result["machine"]),
        f"client: {result['client']}; closed loop, {settings['duration_seconds']} s per "
        f"phase after {settings['warmup_seconds']} s of warm-up, {settings['rounds']} "
        f"round(s); seed {settings['seed']}",
        "",
        *_tables(result),
        "",
        *(f"note: {n}" for n in result["notes"]),
        f"Redis operations that failed during the run (gateway /readyz): "
        f"{fmt_counts(store_failures(result['targets']))}",
    ]
    return "\n".join(lines)


def command_line(settings: Mapping[str, Any]) -> str:
    """The `load.py` command that measures with these settings (defaults left out)."""
    parts = [
        "python benchmarks/load.py",
        f"--duration {settings['duration_seconds']:g}",
        f"--rounds {settings['rounds']}",
    ]
    if settings["warmup_seconds"] != DEFAULT_WARMUP_SECONDS:
        parts.append(f"--warmup {settings['warmup_seconds']:g}")
    concurrency = ",".join(str(c) for c in settings["concurrency"])
    if concurrency != DEFAULT_CONCURRENCY:
        parts.append(f"--concurrency {concurrency}")
    workloads = ",".join(settings["workloads"])
    if workloads != DEFAULT_WORKLOADS:
        parts.append(f"--workloads {workloads}")
    return " ".join(parts)


def readme_block(result: Mapping[str, Any]) -> str:
    """The README's load-benchmark block: how it was measured, the tables, the verdicts."""
    settings, info = result["settings"], result["machine"]
    busy = machine_busy_note(result["rows"], settings["duration_seconds"], info["cpu_count"])
    rounds = settings["rounds"]
    median = f"; each row the round with the median req/s of {rounds}" if rounds > 1 else ""
    lines = [
        f"Measured with `{command_line(settings)}` (seed {settings['seed']}{median}); "
        f"{machine_line(info)}; {busy}.",
        "",
        *_tables(result),
    ]
    return "\n".join(lines) + "\n"


def regenerate_readme(result_path: str | Path, readme: str | Path) -> bool:
    """Replaces the README's load-benchmark block with the one of a `--output` JSON;
    True if the README changed. Raises `MarkersError` when its markers are not there."""
    result = derive(orjson.loads(Path(result_path).read_bytes()))
    return rewrite_file(readme, readme_block(result))
