"""What the load report derives from its rows: CPU per request of each process, and each
row against the LiteLLM proxy and against the upstream floor of the same phase.

A phase is one (workload, concurrency): the ratios compare rows of the same phase only.
Every value is derived from the row's measured fields, so a result read back from JSON
gets the same numbers again (`add_ratios` overwrites what it computes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

LITELLM_NAME = "litellm-proxy"
FLOOR_NAME = "upstream"  # the fake upstream called directly

RowKey = tuple[str, int, str]


def index_rows(rows: Iterable[Mapping[str, Any]]) -> dict[RowKey, Mapping[str, Any]]:
    """Rows by (workload, concurrency, target)."""
    return {(r["workload"], r["concurrency"], r["target"]): r for r in rows}


def _per_request_ms(cpu_seconds: float | None, requests: int) -> float | None:
    if cpu_seconds is None or not requests:
        return None
    return round(cpu_seconds * 1000 / requests, 3)


def _quotient(value: float | None, base: float | None, digits: int = 3) -> float | None:
    if value is None or not base:
        return None
    return round(value / base, digits)


def _difference(value: float | None, base: float | None) -> float | None:
    return None if value is None or base is None else round(value - base, 3)


def _latency(row: Mapping[str, Any] | None, which: str) -> float | None:
    if row is None:
        return None
    value = row["latency_ms"][which]
    return None if value is None else float(value)


def add_ratios(rows: Sequence[dict[str, Any]]) -> None:
    """Adds to each row, in place:

    - `upstream_cpu_ms_per_request`, `redis_cpu_ms_per_request`: what the row's fake
      upstream and Redis spent per answered request (the server's own is in
      `server_cpu_ms_per_request`);
    - `rps_vs_litellm`: req/s over the proxy's (> 1: more than the proxy);
    - `cpu_per_request_vs_litellm`: server CPU per request over the proxy's (< 1: less
      CPU per request than the proxy; server processes only);
    - `rps_share_of_floor`: req/s over the upstream called directly (the share of the
      floor's throughput the row keeps);
    - `p50_added_ms`, `p99_added_ms`: latency over the floor's in the same phase.
    """
    by_key = index_rows(rows)
    for row in rows:
        phase = (row["workload"], row["concurrency"])
        litellm = by_key.get((*phase, LITELLM_NAME))
        floor = by_key.get((*phase, FLOOR_NAME))
        requests = row["requests"]
        row["upstream_cpu_ms_per_request"] = _per_request_ms(row["upstream_cpu_seconds"], requests)
        row["redis_cpu_ms_per_request"] = _per_request_ms(row["redis_cpu_seconds"], requests)
        # Two digits, as printed: a verdict at a threshold agrees with the printed value.
        row["rps_vs_litellm"] = _quotient(row["rps"], litellm["rps"] if litellm else None, 2)
        row["cpu_per_request_vs_litellm"] = _quotient(
            row["server_cpu_ms_per_request"],
            litellm["server_cpu_ms_per_request"] if litellm else None,
        )
        row["rps_share_of_floor"] = _quotient(row["rps"], floor["rps"] if floor else None)
        row["p50_added_ms"] = _difference(_latency(row, "p50"), _latency(floor, "p50"))
        row["p99_added_ms"] = _difference(_latency(row, "p99"), _latency(floor, "p99"))
