"""`gateway eval adaptive` end to end on a tiny pair set and probe file written here:
the real embedder, entity comparison and guard, a report per set and judge error, a
JSON file and a PNG per set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.cli import main

LCQMC_ROWS = [
    ("怎么学习英语", "如何学习英语", 1),
    ("北京有什么好吃的", "北京有哪些好吃的", 1),
    ("手机没电了怎么办", "手机没有电了怎么办", 1),
    ("今天天气怎么样", "明天天气怎么样", 0),
    ("苹果多少钱一斤", "香蕉多少钱一斤", 0),
    ("怎么做红烧肉", "红烧肉怎么做", 1),
]
PROBE_ROWS = [
    ("paraphrase", "How do I learn Python?", "How can I learn Python?", 1),
    ("number", "How many calories are in 2 eggs?", "How many calories are in 3 eggs?", 0),
    ("paraphrase", "What is the capital of Australia?", "Which city is Australia's capital?", 1),
]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    (folder / "pairs_zh").mkdir(parents=True)
    lines = [f"{a}\t{b}\t{label}" for a, b, label in LCQMC_ROWS]
    (folder / "pairs_zh" / "lcqmc_dev.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def probe_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "probes"
    folder.mkdir()
    rows = ["kind\tquery\tcandidate\tsame_meaning"]
    rows += [f"{kind}\t{q}\t{c}\t{label}" for kind, q, c, label in PROBE_ROWS]
    (folder / "probes_en.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def test_it_replays_each_set_and_writes_the_report_and_plots(
    data_dir: Path, probe_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output, plots, cache = tmp_path / "out.json", tmp_path / "plots", tmp_path / "signals"
    arguments = [
        "eval",
        "adaptive",
        "--data",
        str(data_dir),
        "--sets",
        "lcqmc,probes",
        "--probe-dir",
        str(probe_dir),
        "--min-stream",
        "120",
        "--output",
        str(output),
        "--plot-dir",
        str(plots),
        "--signals-cache",
        str(cache),
    ]
    assert main(arguments) == 0
    printed = capsys.readouterr().out
    assert "### lcqmc: 6 pairs, stream 120 (20 pass(es)), target 0.97" in printed
    assert "### probes: 3 pairs" in printed
    result = json.loads(output.read_text())
    for name, pairs in (("lcqmc", LCQMC_ROWS), ("probes", PROBE_ROWS)):
        report = result["sets"][name]
        assert report["pairs"] == len(pairs) and report["stream"] >= 120
        assert [run["judge_error"] for run in report["runs"]] == [0.0, 0.02]
        for run in report["runs"]:
            assert run["adaptive"]["served"] >= run["static"]["served"]
            assert run["timeline"][-1]["position"] == report["stream"]
        assert (plots / f"adaptive-{name}.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    # The number check refuses the near miss whatever the threshold: it is never served.
    probes = result["sets"]["probes"]["runs"][0]["adaptive"]
    assert probes["precision"] == 1.0
    # The signals were kept; a second run reads them instead of embedding again.
    assert len(list(cache.iterdir())) == 2
    assert main([*arguments[:-2], "--signals-cache", str(cache), "--judge-errors", "0"]) == 0
    assert "embedding and checking" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sets", "nope"], "unknown set(s) nope"),
        (["--sets", "lcqmc", "--data", "/nonexistent"], "--data must name"),
        (["--judge-errors", "0.6"], "judge_error must be in [0, 0.5)"),
        (["--shadow-rate", "2"], "shadow_rate must be in [0, 1]"),
    ],
)
def test_bad_arguments_are_refused_before_any_work(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "adaptive", *extra]) == 2
    assert message in capsys.readouterr().err
