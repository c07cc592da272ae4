"""The one report writer of the harness.

- `common`: what every benchmark shares (progress lines, percentiles, the machine, the
  JSON file);
- `bench`: `gateway bench`'s report (latency rows, throughput, backends side by side,
  the failures that make a run not count);
- `load`, `load_ratios`, `load_verdicts`, `load_tables`, `load_render`: `benchmarks/load.py`'s
  rows, their ratios to the LiteLLM proxy and the upstream floor, the verdicts against
  issue 21's targets, the tables and the report (and the README's block);
- `readme_block`: replacing a generated block of the README between marker lines.
"""

from __future__ import annotations

from gateway_tools.bench.report.common import machine, machine_line, percentiles, say, write_json

__all__ = ["machine", "machine_line", "percentiles", "say", "write_json"]
