"""What every benchmark's report shares: progress lines, percentiles, the machine, JSON."""

from __future__ import annotations

import os
import platform
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson


def say(message: str, tag: str = "bench") -> None:
    # Progress goes to stderr so stdout holds only the table.
    print(f"[{tag}] {message}", file=sys.stderr, flush=True)


def percentiles(values: Sequence[float]) -> dict[str, float | int | None]:
    """p50 and p99 in ms (inclusive method: p99 of 100 samples is near the maximum)."""
    if not values:
        return {"p50": None, "p99": None, "n": 0}
    p99 = (
        statistics.quantiles(values, n=100, method="inclusive")[98]
        if len(values) > 1
        else values[0]
    )
    return {"p50": round(statistics.median(values), 3), "p99": round(p99, 3), "n": len(values)}


def machine() -> dict[str, Any]:
    """The machine a run measured, as every report's JSON carries it."""
    return {
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def machine_line(info: Mapping[str, Any]) -> str:
    """`machine()` as the first line of a table's heading."""
    return f"machine: {info['cpu_count']} CPUs, Python {info['python']}, {info['platform']}"


def write_json(path: str | Path, result: Mapping[str, Any], tag: str = "bench") -> None:
    """The report as indented JSON (the `--output` of every benchmark)."""
    Path(path).write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    say(f"results written to {path}", tag)
