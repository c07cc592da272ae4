"""Shared pieces of `benchmarks/load.py` and `benchmarks/soak.py`.

- `procstats`: CPU seconds and resident memory (current and peak) of server processes;
- `prompts`: the request bodies of a run (primed questions, paraphrases, new prompts)
  and the workloads that draw from them;
- `targets`: the servers under test (fake upstream, gateway, LiteLLM proxy) and how each
  reports the cache layer of an answer;
- `driver`: priming and closed-loop phases on the raw HTTP client of `gateway_tools.bench`;
- `report`: the load benchmark's rows, markdown table and JSON.

The scripts run as `python benchmarks/<script>.py`, which puts this folder's parent on
`sys.path`: the package is imported as `loadkit`, not as part of `gateway`.
"""
