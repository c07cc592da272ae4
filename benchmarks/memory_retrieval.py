"""What memory costs a forwarded request, without HTTP: get one user's prepared scope,
rank it for a query, build the injected block. Embedded vs Redis, by scope size.

    python benchmarks/memory_retrieval.py --sizes 100,1000,5000 --queries 100

Memories are synthetic sentences with codes and random unit 512-d vectors (seeded); the
query vector is given, so the embedder's time (~1-2 ms for the local one, reused from
the semantic lookup when both run) is not part of the numbers. Redis: a fresh Redis 8 on
loopback (`gateway.testing.redis_server`), stopped at the end. Reports median and p99
in milliseconds, both backends side by side, for a scope that changed since the last
request (loaded and indexed again) and for one that did not (the usual case).
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

from gateway.memory.inject import build_block
from gateway.memory.records import MemoryRecord, MemoryScope, new_memory_id
from gateway.memory.retrieval import ScopeIndex, TermCache, rank
from gateway.memory.service import MemoryService
from gateway.memory.session import from_retrieval
from gateway.memory.tokens import Tokenizers
from gateway.policy.memory import MemoryPolicy
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.protocols import MemoryStore
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.redis.memory import RedisMemoryStore
from gateway.testing.redis_server import RedisServer

DIMENSIONS = 512
WORDS = [
    "invoice",
    "shipment",
    "refund",
    "warehouse",
    "contract",
    "renewal",
    "meeting",
    "budget",
    "travel",
    "seat",
]


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


async def measure(
    store: MemoryStore, scope: MemoryScope, queries: int, embedder_name: str = "bench"
) -> dict[str, Any]:
    """`cold`: the scope changed since the last request (load it, index it, rank);
    `warm`: it did not (one version read, rank the prepared index). Both build the block."""
    policy = MemoryPolicy()
    counter = Tokenizers().for_model("gpt-4o-mini")
    rng = np.random.default_rng(7)
    service = MemoryService(store, _NoSessions(), _NamedEmbedder(embedder_name))
    samples: dict[str, list[float]] = {"cold": [], "warm": []}
    # As in the service: texts already seen are not tokenised again (ADD-only).
    terms = TermCache()
    for index_number in range(queries):
        query = rng.standard_normal(DIMENSIONS).astype(np.float32)
        query /= np.linalg.norm(query)
        text = (
            f"who owns the {WORDS[index_number % len(WORDS)]} with code ZX-{1000 + index_number}?"
        )
        for kind in ("cold", "warm"):
            started = time.perf_counter()
            if kind == "cold":
                records = await store.in_scope(scope)
                index = ScopeIndex.build(records, embedder_name, terms)
            else:
                index = await service.scope_index(scope)
            ranked = rank(index, text, query, time.time(), policy.ranking, policy.retrieve_top_k)
            build_block([from_retrieval(s) for s in ranked], counter, policy.max_memory_tokens)
            samples[kind].append((time.perf_counter() - started) * 1000)
    return {kind: _stats(values) for kind, values in samples.items()}


class _NamedEmbedder:
    """Only its name is used: queries come with their vectors."""

    dimensions = DIMENSIONS

    def __init__(self, name: str) -> None:
        self.name = name

    async def embed(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def calibrate(self, cosine: float, language: str | None = None) -> float:
        return cosine

    async def warm_up(self) -> None:
        return None


class _NoSessions:
    async def load(self, tenant: str, user: str, session: str) -> list[Any]:
        return []

    async def save(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def forget(self, tenant: str, user: str, memory_ids: Sequence[str]) -> None:
        return None

    async def close(self) -> None:
        return None


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
    print("| memories in scope | backend | changed scope p50 / p99 | unchanged p50 / p99 |")
    print("|---:|---|---:|---:|")
    for size, backends in results.items():
        for name, numbers in backends.items():
            cold, warm = numbers["cold"], numbers["warm"]
            print(
                f"| {size} | {name} | {cold['p50_ms']} / {cold['p99_ms']} ms "
                f"| {warm['p50_ms']} / {warm['p99_ms']} ms |"
            )
    if args.output:
        args.output.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
