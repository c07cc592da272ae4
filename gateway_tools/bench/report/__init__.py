"""The one report writer of the harness.

- `common`: what every benchmark shares (progress lines, percentiles, the machine, the
  JSON file);
- `bench`: `gateway bench`'s report (latency rows, throughput, backends side by side,
  the failures that make a run not count);
- `load`: the rows, markdown table and LiteLLM comparison of `benchmarks/load.py`.
"""

from __future__ import annotations

from gateway_tools.bench.report.common import machine, machine_line, percentiles, say, write_json

__all__ = ["machine", "machine_line", "percentiles", "say", "write_json"]
