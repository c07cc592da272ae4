"""benchmarks/compare_trees.py's summary (medians per tree, per-round CPU differences)
and its refusal of a directory that is not a checkout."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.unit.tools.bench_script import load_benchmark


def _script() -> ModuleType:
    return load_benchmark("compare_trees")


def test_medians_per_tree_and_the_per_round_difference() -> None:
    script = _script()
    old = script.TreeRounds([0.50, 0.60, 0.55], [2000.0, 1800.0, 1900.0], [0.5, 0.7], [1.2, 1.4])
    # The machine slowed in round 2 for both: the per-round difference sees through it.
    new = script.TreeRounds([0.30, 0.45, 0.32], [3000.0, 2500.0, 2900.0], [0.4, 0.6], [1.0, 1.2])
    summary = script.summarise(old, new)
    assert summary["old"] == {
        "cpu_ms_per_exact_hit": 0.55,
        "exact_hits_per_second": 1900.0,
        "exact_hit_p50_ms": 0.6,
        "semantic_hit_p50_ms": 1.3,
    }
    assert summary["new"]["cpu_ms_per_exact_hit"] == 0.32
    assert summary["cpu_delta_per_round_median_ms"] == -0.2


def test_a_directory_that_is_not_a_checkout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _script().main([str(tmp_path), str(tmp_path)])
    assert exit_info.value.code == 2
