"""The load benchmark's verdicts: each gateway backend against the targets of issue 21.

A goal holds one row field of one workload to a bound at some concurrencies; it is met
when every one of them is measured and within the bound, "not measured" when any is
missing (a run with `--concurrency 1`, or without the proxy, cannot decide a ratio to it).
The values compared are the ones the report prints (req/s ratios to 2 digits, CPU per
request to 3), so a printed 20.00× and its verdict never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gateway_tools.bench.report.load_ratios import index_rows

MET, NOT_MET, NOT_MEASURED = "met", "not met", "not measured"
GATEWAY_PREFIX = "gateway-"


@dataclass(frozen=True, slots=True)
class Goal:
    key: str
    text: str
    workload: str
    metric: str  # a row field
    bound: float
    at_most: bool  # True: value <= bound; False: value >= bound
    # None: every concurrency the run measured for that workload.
    concurrencies: tuple[int, ...] | None

    def holds(self, value: float) -> bool:
        return value <= self.bound if self.at_most else value >= self.bound


GOALS: tuple[Goal, ...] = (
    Goal(
        "exact_rps_vs_litellm",
        "exact hits ≥ 20× the LiteLLM proxy's req/s at c=16",
        "exact",
        "rps_vs_litellm",
        20.0,
        at_most=False,
        concurrencies=(16,),
    ),
    Goal(
        "exact_cpu_per_hit",
        "≤ 0.30 ms of gateway server CPU per exact hit at c=16 (server process only)",
        "exact",
        "server_cpu_ms_per_request",
        0.30,
        at_most=True,
        concurrencies=(16,),
    ),
    Goal(
        "miss_rps_vs_litellm",
        "misses ≥ 2× the LiteLLM proxy's req/s at c=1 and c=16",
        "miss",
        "rps_vs_litellm",
        2.0,
        at_most=False,
        concurrencies=(1, 16),
    ),
    Goal(
        "mix_rps_vs_litellm",
        "the mix ≥ 3× the LiteLLM proxy's req/s at every concurrency measured",
        "mix",
        "rps_vs_litellm",
        3.0,
        at_most=False,
        concurrencies=None,
    ),
)

# Part of the same issue's bar, but not something this benchmark measures.
ELSEWHERE = ("semantic hits p50 ≤ 2.5 ms (`gateway bench` measures it)",)


def _concurrencies(goal: Goal, rows: Sequence[Mapping[str, Any]], gateway: str) -> list[int]:
    if goal.concurrencies is not None:
        return list(goal.concurrencies)
    phase = (goal.workload, gateway)
    return sorted({r["concurrency"] for r in rows if (r["workload"], r["target"]) == phase})


def verdict(goal: Goal, rows: Sequence[Mapping[str, Any]], gateway: str) -> dict[str, Any]:
    """One goal for one gateway: its status and the value at each concurrency."""
    by_key = index_rows(rows)
    values: dict[str, float | None] = {}
    for concurrency in _concurrencies(goal, rows, gateway):
        row = by_key.get((goal.workload, concurrency, gateway))
        values[str(concurrency)] = None if row is None else row.get(goal.metric)
    measured = [v for v in values.values() if v is not None]
    if not values or len(measured) < len(values):
        status = NOT_MEASURED
    else:
        status = MET if all(goal.holds(v) for v in measured) else NOT_MET
    return {
        "goal": goal.key,
        "target": gateway,
        "text": goal.text,
        "metric": goal.metric,
        "bound": goal.bound,
        "at_most": goal.at_most,
        "values": values,  # by concurrency (JSON keys are strings)
        "status": status,
    }


def verdicts(
    rows: Sequence[Mapping[str, Any]], gateways: Sequence[str], goals: Sequence[Goal] = GOALS
) -> list[dict[str, Any]]:
    """Every goal for every gateway backend of the run, goal by goal."""
    return [verdict(goal, rows, gateway) for goal in goals for gateway in gateways]


def gateways_of(targets: Sequence[str]) -> list[str]:
    return [name for name in targets if name.startswith(GATEWAY_PREFIX)]


def all_met(results: Sequence[Mapping[str, Any]]) -> bool:
    return bool(results) and all(r["status"] == MET for r in results)
