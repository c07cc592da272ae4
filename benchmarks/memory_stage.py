"""Where the memory stage of a miss spends its milliseconds, in-process (no HTTP): the
stage per kind and the steps of ranking one scope, at 10,000 knowledge items and 1,000
memories, embedded backend, shipped embedder.

    OMP_NUM_THREADS=1 python benchmarks/memory_stage.py --questions 200
    OMP_NUM_THREADS=1 python benchmarks/memory_stage.py --knowledge 2000 --output stage.json

(`OMP_NUM_THREADS=1` as `gateway serve` runs: a second BLAS thread on a busy 2-core box
makes the vector product several times slower.) See gateway_tools/bench/memory_stage.py.
"""

from __future__ import annotations

import argparse
import asyncio
import random

from gateway_tools.bench.memory_stage import StageSetup, render, run_memory_stage
from gateway_tools.bench.report.common import machine, write_json


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--questions", type=int, default=200, help="questions per kind and round")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--knowledge", type=int, default=10_000, help="knowledge items")
    parser.add_argument("--memories", type=int, default=1_000, help="memories per user")
    parser.add_argument("--seed", type=int, help="seed of the texts and questions")
    parser.add_argument("--output", help="also write the results as JSON to this path")
    args = parser.parse_args()
    if min(args.questions, args.rounds, args.knowledge, args.memories) < 1:
        parser.error("--questions, --rounds, --knowledge and --memories must be at least 1")
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    setup = StageSetup(args.knowledge, args.memories, args.questions, args.rounds, seed)
    result = asyncio.run(run_memory_stage(setup))
    print(render(result))
    if args.output:
        write_json(args.output, {"machine": machine(), "seed": seed, **result}, "memory_stage")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
