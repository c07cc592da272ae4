"""Gateway overhead benchmark: the same run as `gateway bench`.

    python benchmarks/overhead.py --requests 400 --output results.json
    python benchmarks/overhead.py --backend both --requests 300

Starts the fake upstream and the gateway on loopback, measures exact-hit and semantic-hit
latency, the latency a miss adds over calling the upstream directly, and throughput; see
gateway_tools/bench/ for the method. `--backend` picks the storage: embedded (the default),
redis (a Redis 8 with RediSearch the benchmark starts on loopback) or both, side by side.
"""

from __future__ import annotations

import argparse

from gateway_tools.bench import BACKEND_CHOICES, EMBEDDED, run_benchmark
from gateway_tools.bench.apis import API_NAMES, parse_apis


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=400, help="requests per measurement")
    parser.add_argument("--output", help="also write the results as JSON to this path")
    parser.add_argument(
        "--seed", type=int, help="seed of the miss prompts (default: a new one per run)"
    )
    parser.add_argument(
        "--backend",
        choices=BACKEND_CHOICES,
        default=EMBEDDED,
        help="storage backend: embedded, redis, or both side by side (default: embedded)",
    )
    parser.add_argument(
        "--apis",
        type=parse_apis,
        default=API_NAMES,
        help="APIs compared side by side, comma-separated (default: all four)",
    )
    args = parser.parse_args()
    return run_benchmark(
        requests=args.requests,
        output=args.output,
        seed=args.seed,
        backend=args.backend,
        apis=args.apis,
    )


if __name__ == "__main__":
    raise SystemExit(main())
