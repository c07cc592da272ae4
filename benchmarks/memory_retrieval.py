"""What memory costs a forwarded request, without HTTP: load one user's scope, rank it
for a query, build the injected block. Embedded vs Redis, by scope size.

    python benchmarks/memory_retrieval.py --sizes 100,1000,5000 --queries 100

Memories are synthetic sentences with codes and random unit 512-d vectors (seeded); the
query vector is given, so the embedder's time (~1-2 ms for the local one, reused from
the semantic lookup when both run) is not part of the numbers. Redis: a fresh Redis 8 on
loopback (`gateway.devtools.redis_server`), stopped at the end. Reports median and p99
per stage and in total, in milliseconds, both backends side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from gateway.cache.redis_backend import RedisBackend
from gateway.devtools.redis_server import RedisServer
from gateway.memory.embedded_store import open_embedded_memory
from gateway.memory.inject import build_block
from gateway.memory.records import MemoryRecord, MemoryScope, new_memory_id
from gateway.memory.redis_store import RedisMemoryStore
from gateway.memory.retrieval import MemoryRanker
from gateway.memory.session import from_retrieval
from gateway.memory.store import MemoryStore
from gateway.memory.tokens import Tokenizers
from gateway.policy.models import MemoryPolicy

DIMENSIONS = 512
WORDS = "invoice shipment refund warehouse contract renewal meeting budget travel seat".split()


def synthetic_records(count: int, scope: MemoryScope, rng: random.Random) -> list[MemoryRecord]:
    vectors = np.random.default_rng(rng.randint(0, 2**31)).standard_normal((count, DIMENSIONS))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        MemoryRecord(
            id=new_memory_id(),
            tenant=scope.tenant,
            user=scope.user,
            content=(
                f"The {rng.choice(WORDS)} for project {rng.choice(WORDS)} uses code "
                f"ZX-{rng.randint(1000, 9999)} and is owned by team {rng.choice(WORDS)}."
            ),
            created_at=time.time() - rng.uniform(0, 90 * 86400),
            vector=vectors[i].astype(np.float32),
            embedder="bench",
        )
        for i in range(count)
    ]


def _stats(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 3),
    }


async def measure(store: MemoryStore, scope: MemoryScope, queries: int) -> dict[str, Any]:
    policy = MemoryPolicy()
    ranker = MemoryRanker("bench")
    counter = Tokenizers().for_model("gpt-4o-mini")
    rng = np.random.default_rng(7)
    load, rank, block, total = [], [], [], []
    for index in range(queries):
        query = rng.standard_normal(DIMENSIONS).astype(np.float32)
        query /= np.linalg.norm(query)
        text = f"who owns the {WORDS[index % len(WORDS)]} with code ZX-{1000 + index}?"
        started = time.perf_counter()
        records = await store.in_scope(scope)
        loaded = time.perf_counter()
        ranked = ranker.rank(
            records, text, query, time.time(), policy.ranking, policy.retrieve_top_k
        )
        ranked_at = time.perf_counter()
        build_block([from_retrieval(s) for s in ranked], counter, policy.max_memory_tokens)
        done = time.perf_counter()
        load.append((loaded - started) * 1000)
        rank.append((ranked_at - loaded) * 1000)
        block.append((done - ranked_at) * 1000)
        total.append((done - started) * 1000)
    return {
        "load": _stats(load),
        "rank": _stats(rank),
        "block": _stats(block),
        "total": _stats(total),
    }


async def run(sizes: Sequence[int], queries: int) -> dict[str, Any]:
    rng = random.Random(1)
    results: dict[str, Any] = {}
    server = RedisServer().start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            embedded, _, database = await open_embedded_memory(Path(folder))
            backend = await RedisBackend.open(
                server.url,
                prefix="bench",
                index_name="bench-512d",
                operation_timeout_seconds=5.0,
            )
            redis_store = RedisMemoryStore(backend)
            try:
                loaded = 0
                for size in sizes:
                    scope = MemoryScope("bench", f"user-{size}")
                    records = synthetic_records(size, scope, rng)
                    for start in range(0, size, 500):
                        await embedded.add(records[start : start + 500])
                        await redis_store.add(records[start : start + 500])
                    loaded += size
                    results[str(size)] = {
                        "embedded": await measure(embedded, scope, queries),
                        "redis": await measure(redis_store, scope, queries),
                    }
                    print(size, orjson.dumps(results[str(size)]).decode(), flush=True)
            finally:
                await backend.close()
                await database.close()
    finally:
        server.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    sizes = [int(part) for part in args.sizes.split(",")]
    results = asyncio.run(run(sizes, args.queries))
    print(
        "| memories in scope | backend | load p50 | rank p50 | block p50 | total p50 / p99 (ms) |"
    )
    print("|---:|---|---:|---:|---:|---:|")
    for size, backends in results.items():
        for name, numbers in backends.items():
            print(
                f"| {size} | {name} | {numbers['load']['p50_ms']} | {numbers['rank']['p50_ms']} "
                f"| {numbers['block']['p50_ms']} | {numbers['total']['p50_ms']} / "
                f"{numbers['total']['p99_ms']} |"
            )
    if args.output:
        args.output.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
