"""benchmarks/rate_limit_overhead.py's bookkeeping: per-round differences, the pooled
p50s and the verdict against the 0.3 ms bar, and failures named per gateway."""

from __future__ import annotations

from types import ModuleType

from gateway_tools.bench.measure import Series
from tests.unit.tools.bench_script import load_benchmark


def _script() -> ModuleType:
    return load_benchmark("rate_limit_overhead")


def _series(latencies_ms: list[float], errors: int = 0) -> Series:
    series = Series(latencies_ms=list(latencies_ms))
    series.errors = errors
    return series


def test_rounds_give_the_added_p50_and_the_verdict() -> None:
    script = _script()
    pair = script.Pair("chat")
    pair.add_round(
        {script.PLAIN: _series([1.0, 1.1, 1.2]), script.LIMITED: _series([1.1, 1.2, 1.3])}
    )
    pair.add_round(
        {script.LIMITED: _series([1.6, 1.7, 1.8]), script.PLAIN: _series([1.0, 1.1, 1.2])}
    )
    summary = pair.summary()
    assert summary["requests_per_gateway"] == 6
    assert summary["round_delta_range_ms"] == [0.1, 0.6]
    assert summary["plain_p50_ms"] == 1.1 and summary["limited_p50_ms"] == 1.45
    assert summary["added_p50_ms"] == 0.35 and summary["under_bar"] is False
    assert pair.failures == []


def test_a_failed_request_is_reported_with_its_gateway() -> None:
    script = _script()
    pair = script.Pair("messages")
    pair.add_round({script.PLAIN: _series([1.0]), script.LIMITED: _series([1.0], errors=1)})
    assert len(pair.failures) == 1 and pair.failures[0].startswith("limited messages")
    assert pair.summary()["under_bar"] is True
