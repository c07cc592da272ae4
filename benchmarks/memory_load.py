"""Memory work per request at scale, both backends, and what it adds to cache hits.

    python benchmarks/memory_load.py --requests 200 --output memory_load.json
    python benchmarks/memory_load.py --backend embedded --knowledge 2000 --memories 200

Starts a fake upstream and a real `gateway serve` per storage backend (embedded; redis:
a Redis 8 with RediSearch on loopback, from the test harness's runner), fills one tenant
with `--knowledge` knowledge items (through `/v1/knowledge`, admin key, batches of 100)
and one user in each of two tenants with `--memories` memories (`/v1/memories`), then
measures, the kinds interleaved request by request:

- misses (each a new question) of a user with memories in the knowledge tenant, a user
  without memories there (knowledge only), a user with memories in the tenant without
  knowledge (memories only) and the reference, a user with neither; each without and
  with `x-gateway-session`: the memory stage's own time from the gateway's decision
  records (`/admin/decisions`, `stages_ms.memory`; p50/p95/p99) and end-to-end latency,
  with what memory adds over the reference;
- exact hits without a user and by the users with memories (memory is retrieved before
  the lookup with `memory.bypass_cache_when_injected`, the default): p50 side by side.

Prints markdown tables; `--output` writes the JSON. See gateway_tools/bench/memory_load/.
"""

from __future__ import annotations

import argparse
import random

from gateway_tools.bench import BACKEND_CHOICES, BOTH
from gateway_tools.bench.memory_load.run import Setup, run_memory_load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=200, help="requests per kind")
    parser.add_argument("--knowledge", type=int, default=10_000, help="knowledge items")
    parser.add_argument("--memories", type=int, default=1_000, help="memories per full user")
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default=BOTH)
    parser.add_argument("--seed", type=int, help="seed of the texts and questions")
    parser.add_argument("--output", help="also write the results as JSON to this path")
    args = parser.parse_args()
    if min(args.requests, args.knowledge, args.memories) < 1:
        parser.error("--requests, --knowledge and --memories must be at least 1")
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    setup = Setup(args.knowledge, args.memories, args.requests, seed)
    return run_memory_load(args.backend, setup, args.output)


if __name__ == "__main__":
    raise SystemExit(main())
