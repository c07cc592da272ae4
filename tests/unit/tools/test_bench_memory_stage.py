"""`benchmarks/memory_stage.py`'s tables: one row per kind, one column per ranked scope."""

from __future__ import annotations

from gateway_tools.bench.memory_stage import render


def test_the_tables_show_every_kind_and_every_step_of_every_scope() -> None:
    stage = {"stage": 4.2, "memory_retrieve": 3.9, "memory_inject": 0.3}
    steps = {"vector product": 1.5, "rank (all of it)": 3.1}
    table = render(
        {
            "stage": {"knowledge only": stage, "memories only": stage},
            "rank": {"knowledge (10,000 items)": steps, "memories (1,000)": steps},
        }
    )
    assert "| knowledge only | 4.20 | 3.90 | 0.30 |" in table
    assert "| memories only | 4.20 | 3.90 | 0.30 |" in table
    assert "| ranking one scope, p50 ms | knowledge (10,000 items) | memories (1,000) |" in table
    assert "| vector product | 1.500 | 1.500 |" in table
