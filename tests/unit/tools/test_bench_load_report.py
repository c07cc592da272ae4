"""`benchmarks/load.py`'s report on a synthetic result: the ratios against the LiteLLM
proxy and the upstream floor, the verdicts at their thresholds, the tables, and the
README block regenerated from the JSON."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from gateway_tools.bench.report.load_ratios import add_ratios
from gateway_tools.bench.report.load_render import derive, readme_block, regenerate_readme, render
from gateway_tools.bench.report.load_tables import cpu_table, throughput_table
from gateway_tools.bench.report.load_verdicts import (
    GOALS,
    MET,
    NOT_MEASURED,
    NOT_MET,
    all_met,
    verdicts,
)
from gateway_tools.bench.report.readme_block import (
    LOAD_END,
    LOAD_START,
    MarkersError,
    replace_between,
)

ROOT = Path(__file__).resolve().parents[3]
TARGETS = ("upstream", "gateway-embedded", "gateway-redis", "litellm-proxy")
WORKLOADS = ("exact", "miss", "mix")
CONCURRENCIES = (1, 16, 64)
GATEWAYS = ["gateway-embedded", "gateway-redis"]


def _row(
    workload: str,
    concurrency: int,
    target: str,
    rps: float,
    *,
    cpu_ms: float = 1.0,
    p50: float = 2.0,
    p99: float = 9.0,
    upstream_cpu_s: float | None = 0.5,
    redis_cpu_s: float | None = None,
) -> dict[str, Any]:
    requests = int(rps * 6)
    return {
        "workload": workload,
        "concurrency": concurrency,
        "target": target,
        "rps": rps,
        "requests": requests,
        "latency_ms": {"p50": p50, "p99": p99, "n": requests},
        "errors": 0,
        "first_error": None,
        "unexpected_layer": 0,
        "first_unexpected": None,
        "hit_share": None if target == "upstream" else 1.0,
        "server_cpu_seconds": round(cpu_ms * requests / 1000, 3),
        "server_cpu_ms_per_request": cpu_ms,
        "server_peak_rss_mib": 300.0,
        "upstream_cpu_seconds": None if target == "upstream" else upstream_cpu_s,
        "redis_cpu_seconds": redis_cpu_s,
        "client_cpu_seconds": 0.4,
        "other_cpu_seconds": 1.2,
    }


def _rows(gateway_rps: float = 2000.0, gateway_cpu_ms: float = 0.25) -> list[dict[str, Any]]:
    """Every phase: the floor 4000 req/s, the proxy 100, each gateway `gateway_rps`."""
    rows = []
    for workload in WORKLOADS:
        for c in CONCURRENCIES:
            rows.append(_row(workload, c, "upstream", 4000.0, cpu_ms=0.2, p50=0.25, p99=1.0))
            rows.append(_row(workload, c, "litellm-proxy", 100.0, cpu_ms=5.0, p50=10.0, p99=40.0))
            for name in GATEWAYS:
                rows.append(_row(workload, c, name, gateway_rps, cpu_ms=gateway_cpu_ms))
    return rows


def _result(rows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "benchmark": "load",
        "machine": {"cpu_count": 2, "python": "3.11.9", "platform": "Linux-test"},
        "client": "raw HTTP/1.1 client",
        "settings": {
            "duration_seconds": 6.0,
            "rounds": 3,
            "warmup_seconds": 1.0,
            "concurrency": list(CONCURRENCIES),
            "workloads": {w: f"the {w} workload" for w in WORKLOADS},
            "seed": 7,
        },
        "targets": {name: {"kind": name.split("-")[0]} for name in TARGETS},
        "notes": ["a note"],
        "rows": _rows() if rows is None else rows,
        "ok": True,
    }


def _find(rows: list[dict[str, Any]], workload: str, c: int, target: str) -> dict[str, Any]:
    return next(
        r for r in rows if (r["workload"], r["concurrency"], r["target"]) == (workload, c, target)
    )


def _status(results: list[dict[str, Any]], goal: str, target: str) -> str:
    found = next(r for r in results if (r["goal"], r["target"]) == (goal, target))
    status = found["status"]
    assert isinstance(status, str)
    return status


# --- ratios -------------------------------------------------------------------------


def test_ratios_against_the_proxy_and_the_floor_of_the_same_phase() -> None:
    rows = _rows()
    _find(rows, "miss", 16, "gateway-redis").update(
        rps=300.0, server_cpu_ms_per_request=2.0, latency_ms={"p50": 20.5, "p99": 61.0, "n": 1}
    )
    add_ratios(rows)
    row = _find(rows, "miss", 16, "gateway-redis")
    assert row["rps_vs_litellm"] == 3.0  # 300 / 100
    assert row["cpu_per_request_vs_litellm"] == 0.4  # 2.0 ms / 5.0 ms
    assert row["rps_share_of_floor"] == 0.075  # 300 / 4000
    assert row["p50_added_ms"] == 20.25  # 20.5 - 0.25
    assert row["p99_added_ms"] == 60.0  # 61 - 1
    # The other rows of other phases are untouched by this one's numbers.
    assert _find(rows, "miss", 1, "gateway-redis")["rps_vs_litellm"] == 20.0


def test_upstream_and_redis_cpu_per_request_are_separate_from_the_server() -> None:
    rows = [_row("exact", 16, "gateway-redis", 1000.0, upstream_cpu_s=0.6, redis_cpu_s=1.2)]
    add_ratios(rows)
    row = rows[0]
    assert row["requests"] == 6000
    assert row["upstream_cpu_ms_per_request"] == 0.1  # 600 ms / 6000
    assert row["redis_cpu_ms_per_request"] == 0.2
    assert row["server_cpu_ms_per_request"] == 1.0


def test_without_the_proxy_or_the_floor_the_ratios_are_none() -> None:
    rows = [r for r in _rows() if r["target"].startswith("gateway-")]
    add_ratios(rows)
    for key in ("rps_vs_litellm", "cpu_per_request_vs_litellm", "rps_share_of_floor"):
        assert {r[key] for r in rows} == {None}
    assert {r["p50_added_ms"] for r in rows} == {None}


def test_a_proxy_with_zero_throughput_gives_no_ratio_rather_than_an_error() -> None:
    rows = _rows()
    _find(rows, "exact", 1, "litellm-proxy")["rps"] = 0.0
    add_ratios(rows)
    assert _find(rows, "exact", 1, "gateway-embedded")["rps_vs_litellm"] is None


# --- verdicts -----------------------------------------------------------------------


def test_a_gateway_far_above_every_target_meets_all_of_them() -> None:
    rows = _rows(gateway_rps=2500.0, gateway_cpu_ms=0.2)  # 25x the proxy everywhere
    add_ratios(rows)
    results = verdicts(rows, GATEWAYS)
    assert len(results) == len(GOALS) * len(GATEWAYS)
    assert {r["status"] for r in results} == {MET}
    assert all_met(results)


def test_exact_hits_at_exactly_20x_meet_and_just_below_do_not() -> None:
    rows = _rows()
    _find(rows, "exact", 16, "gateway-embedded")["rps"] = 2000.0  # 20.00x
    _find(rows, "exact", 16, "gateway-redis")["rps"] = 1999.0  # 19.99x
    add_ratios(rows)
    results = verdicts(rows, GATEWAYS)
    assert _status(results, "exact_rps_vs_litellm", "gateway-embedded") == MET
    assert _status(results, "exact_rps_vs_litellm", "gateway-redis") == NOT_MET
    assert not all_met(results)


def test_exact_hit_cpu_is_judged_at_c16_against_030_ms() -> None:
    rows = _rows()
    _find(rows, "exact", 16, "gateway-embedded")["server_cpu_ms_per_request"] = 0.30
    _find(rows, "exact", 16, "gateway-redis")["server_cpu_ms_per_request"] = 0.301
    _find(rows, "exact", 1, "gateway-embedded")["server_cpu_ms_per_request"] = 0.9  # not c=16
    add_ratios(rows)
    results = verdicts(rows, GATEWAYS)
    assert _status(results, "exact_cpu_per_hit", "gateway-embedded") == MET
    assert _status(results, "exact_cpu_per_hit", "gateway-redis") == NOT_MET


def test_misses_need_2x_at_both_c1_and_c16_but_not_at_c64() -> None:
    rows = _rows()
    _find(rows, "miss", 1, "gateway-embedded")["rps"] = 200.0  # 2.00x
    _find(rows, "miss", 16, "gateway-embedded")["rps"] = 250.0
    _find(rows, "miss", 64, "gateway-embedded")["rps"] = 50.0  # not a target
    _find(rows, "miss", 1, "gateway-redis")["rps"] = 300.0
    _find(rows, "miss", 16, "gateway-redis")["rps"] = 199.0  # 1.99x
    add_ratios(rows)
    results = verdicts(rows, GATEWAYS)
    assert _status(results, "miss_rps_vs_litellm", "gateway-embedded") == MET
    assert _status(results, "miss_rps_vs_litellm", "gateway-redis") == NOT_MET
    found = next(r for r in results if r["goal"] == "miss_rps_vs_litellm")
    assert found["values"] == {"1": 2.0, "16": 2.5}


def test_the_mix_needs_3x_at_every_concurrency_measured() -> None:
    rows = _rows()
    _find(rows, "mix", 64, "gateway-redis")["rps"] = 299.0
    _find(rows, "mix", 1, "gateway-embedded")["rps"] = 300.0
    add_ratios(rows)
    results = verdicts(rows, GATEWAYS)
    assert _status(results, "mix_rps_vs_litellm", "gateway-embedded") == MET
    assert _status(results, "mix_rps_vs_litellm", "gateway-redis") == NOT_MET
    found = next(r for r in results if r["goal"] == "mix_rps_vs_litellm")
    assert list(found["values"]) == ["1", "16", "64"]


def test_a_goal_whose_phase_was_not_run_is_not_measured_never_met() -> None:
    rows = [r for r in _rows() if r["concurrency"] == 1]  # --concurrency 1
    add_ratios(rows)
    results = verdicts(rows, GATEWAYS)
    assert _status(results, "exact_rps_vs_litellm", "gateway-embedded") == NOT_MEASURED
    assert _status(results, "miss_rps_vs_litellm", "gateway-embedded") == NOT_MEASURED
    assert _status(results, "mix_rps_vs_litellm", "gateway-embedded") == MET
    assert not all_met(results)


def test_without_the_proxy_every_ratio_goal_is_not_measured() -> None:
    rows = [r for r in _rows() if r["target"] != "litellm-proxy"]
    add_ratios(rows)
    results = verdicts(rows, GATEWAYS)
    by_goal = {r["goal"]: r["status"] for r in results if r["target"] == "gateway-embedded"}
    assert by_goal == {
        "exact_rps_vs_litellm": NOT_MEASURED,
        "exact_cpu_per_hit": MET,
        "miss_rps_vs_litellm": NOT_MEASURED,
        "mix_rps_vs_litellm": NOT_MEASURED,
    }


# --- tables and report --------------------------------------------------------------


def test_each_workload_has_its_tables_with_as_many_cells_as_the_header() -> None:
    rows = _rows()
    add_ratios(rows)
    for workload in WORKLOADS:
        for table in (
            throughput_table(rows, workload, TARGETS),
            cpu_table(rows, workload, TARGETS),
        ):
            assert len(table) == 2 + len(CONCURRENCIES) * len(TARGETS)
            assert {line.count("|") for line in table} == {table[0].count("|")}
    exact = throughput_table(rows, "exact", TARGETS)
    assert exact[2].startswith("| 1 | upstream | 4000.0 | 40.00× | 100 % | 0.250 | 1.000 |")
    assert exact[3] == (
        "| 1 | gateway-embedded | 2000.0 | 20.00× | 50 % | 2.000 | 9.000 | +1.750 | +8.000 "
        "| 0 | 0 | 100 % |"
    )
    assert [line.split(" | ")[1] for line in exact[2:6]] == list(TARGETS)
    cpu = cpu_table(rows, "exact", TARGETS)
    assert cpu[3].startswith("| 1 | gateway-embedded | 0.250 | 0.05× | 0.042 | — |")


def test_the_report_shows_the_verdicts_with_their_numbers() -> None:
    rows = _rows()
    _find(rows, "exact", 16, "gateway-redis")["rps"] = 950.0
    text = render(derive(_result(rows)))
    assert (
        "| exact hits ≥ 20× the LiteLLM proxy's req/s at c=16 | gateway-redis "
        "| c=16: 9.50× | **not met** |"
    ) in text
    assert "| gateway-embedded | c=16: 0.250 ms | **met** |" in text
    assert "all targets met: no (7 of 8 met, 0 not measured in this run)" in text
    assert "note: a note" in text


def test_the_readme_block_from_json_is_the_block_of_the_run() -> None:
    result = derive(_result())
    block = readme_block(result)
    again = readme_block(derive(orjson.loads(orjson.dumps(result))))
    assert again == block
    assert block.startswith(
        "Measured with `python benchmarks/load.py --duration 6 --rounds 3` (seed 7; each row "
        "the round with the median req/s of 3); machine: 2 CPUs"
    )
    assert "**mix**: the mix workload" in block
    assert "all targets met: yes (8 of 8 met" in block
    assert LOAD_START not in block and LOAD_END not in block


# --- the README block ---------------------------------------------------------------

README_TEXT = (
    f"# Title\r\n\nintro é, naming `{LOAD_START}` and `{LOAD_END}` in prose\n\n"
    "## Benchmark\n\ntext before\n"
    f"{LOAD_START}\nold table\n| a | b |\n{LOAD_END}\n\ntext after\n\n## Next\nend"
)


def test_replacing_the_block_keeps_the_rest_byte_identical() -> None:
    replaced = replace_between(README_TEXT, "new block\nline two\n")
    head, _, rest = README_TEXT.partition(f"\n{LOAD_START}\n")
    _, _, tail = rest.partition(f"\n{LOAD_END}\n")
    head, tail = f"{head}\n", f"\n{tail}"
    assert replaced == f"{head}{LOAD_START}\nnew block\nline two\n{LOAD_END}{tail}"
    # Replacing again with the same block changes nothing.
    assert replace_between(replaced, "new block\nline two\n") == replaced


@pytest.mark.parametrize(
    "text",
    [
        "# no markers at all\n",
        f"only the start {LOAD_START}\n",
        f"only the end {LOAD_END}\n",
        f"{LOAD_END}\nreversed\n{LOAD_START}\n",
        f"{LOAD_START}\n{LOAD_END}\n{LOAD_START}\n{LOAD_END}\n",
        f"inline only: {LOAD_START} block {LOAD_END}\n",
    ],
)
def test_markers_missing_twice_or_reversed_are_an_error(text: str) -> None:
    with pytest.raises(MarkersError):
        replace_between(text, "block")


def test_regenerate_readme_rewrites_only_the_block(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_bytes(README_TEXT.encode("utf-8"))
    result = tmp_path / "load.json"
    result.write_bytes(orjson.dumps(_result()))
    assert regenerate_readme(result, readme) is True
    text = readme.read_bytes().decode("utf-8")
    head = README_TEXT.partition(f"\n{LOAD_START}\n")[0]
    assert text.startswith(f"{head}\n{LOAD_START}\n")
    assert text.endswith(f"\n{LOAD_END}\n" + README_TEXT.partition(f"\n{LOAD_END}\n")[2])
    assert "old table" not in text and "**Against the targets of issue 21**" in text
    assert regenerate_readme(result, readme) is False  # already up to date


def test_regenerate_readme_refuses_a_readme_without_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# no markers\n", encoding="utf-8")
    result = tmp_path / "load.json"
    result.write_bytes(orjson.dumps(_result()))
    with pytest.raises(MarkersError):
        regenerate_readme(result, readme)
    assert readme.read_text(encoding="utf-8") == "# no markers\n"


def test_load_py_render_readme_rewrites_the_block_and_fails_without_markers(
    tmp_path: Path,
) -> None:
    readme = tmp_path / "README.md"
    readme.write_bytes(README_TEXT.encode("utf-8"))
    result = tmp_path / "load.json"
    result.write_bytes(orjson.dumps(_result()))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(ROOT / "benchmarks" / "load.py"), "--render-readme"]
    done = subprocess.run(
        [*command, str(result), "--readme", str(readme)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "**Against the targets of issue 21**" in readme.read_text(encoding="utf-8")
    readme.write_text("no markers\n", encoding="utf-8")
    failed = subprocess.run(
        [*command, str(result), "--readme", str(readme)], env=env, capture_output=True, text=True
    )
    assert failed.returncode == 1
    assert "MarkersError" in failed.stderr


def test_the_benchmarks_page_holds_the_load_benchmark_block_once() -> None:
    text = (ROOT / "docs" / "benchmarks.md").read_bytes().decode("utf-8")
    replaced = replace_between(text, "generated")
    start_line, end_line = f"\n{LOAD_START}\n", f"\n{LOAD_END}\n"
    assert replaced.partition(start_line)[0] == text.partition(start_line)[0]
    assert replaced.partition(end_line)[2] == text.partition(end_line)[2]
    assert text.index(start_line) < text.index(end_line)


def test_a_run_that_does_not_count_says_so_next_to_the_verdicts() -> None:
    result = _result()
    assert "does not count" not in readme_block(derive(result))
    result["ok"] = False
    assert "**this run does not count**" in readme_block(derive(result))
