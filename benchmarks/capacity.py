"""Memory and disk of the embedded stores while traffic keeps creating new entries, with
the caps of `capacity:` set: both must go flat once the caps are reached.

    python benchmarks/capacity.py --prompts 100000 --namespaces 10000 \
        --exact-cap 20000 --semantic-cap 20000 --session-cap 5000
    python benchmarks/capacity.py --prompts 30000 --uncapped       # the growth without caps
    python benchmarks/capacity.py --only-policies                   # LRU / LFU / FIFO hit rates
    python benchmarks/capacity.py --backend redis --prompts 30000 --exact-cap 5000 \
        --semantic-cap 5000 --session-cap 1000 --skip-policies   # Redis used_memory

Writes go through the stores the gateway opens (`gateway.storage.open_storage`, the same
`capacity` settings) the way a cacheable miss writes them: one exact-cache entry, one
semantic entry (a random 512-dimension unit vector, as the local embedder's) in the
fingerprint of its namespace, and every 10th prompt a session save. Prompt i belongs to
namespace i % namespaces, so all namespaces exist after the first `--namespaces` prompts
and each later prompt lands in one that is already there. The store layer is measured,
not HTTP: on a 2-core machine the HTTP path would take an hour for 100,000 prompts and
measure the server, not the stores. (The namespace cap, which bounds how many
fingerprints one tenant creates in the first place, sits in the request pipeline and is
not exercised here; the caps below hold without it.)

Every `--report-every` prompts it prints the process RSS (VmRSS), the data directory's
size on disk (SQLite files with their WAL), the entries held and the evictions so far,
and the mean time per write (exact put + semantic add) over that step.

With `--backend redis` the same writes go to a Redis started for the run (the test
harness's `RedisServer`: Redis 8 with RediSearch), and the disk column is Redis's
`used_memory` (INFO memory): the caps are kept in Redis by the write scripts, so it
must go flat too. Redis runs in its own process, so the RSS column is the benchmark's.

`--only-policies` (and the end of every run) compares eviction policies on a skewed
workload: a Zipf(s) trace over a key space 10x the cache; the real capped exact cache
(LRU) is driven with get-then-put-on-miss and its hit rate reported beside exact
simulations of LRU, LFU and FIFO at the same size.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import sys
import tempfile
import time
from collections import Counter, OrderedDict, deque
from pathlib import Path

import numpy as np

from gateway.cache.limits import CapacitySettings, StoreLimits
from gateway.settings import StorageSettings
from gateway.storage import open_storage
from gateway.storage.protocols import CachedCompletion, SemanticEntry, SessionItem

DIMENSIONS = 512
_ANSWER = "The answer, in a paragraph of ordinary length. " * 12  # ~600 bytes


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def disk_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.iterdir() if path.is_file())


def _mib(value: float) -> str:
    return f"{value / 1024 / 1024:8.1f}"


def completion(index: int) -> dict[str, object]:
    return {
        "id": f"chatcmpl-{index}",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"{_ANSWER} #{index}"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 120, "total_tokens": 140},
    }


def capacity_settings(args: argparse.Namespace) -> CapacitySettings:
    if args.uncapped:
        huge = StoreLimits(max_entries=10**9, max_bytes=2**50)
        return CapacitySettings(exact_cache=huge, semantic_index=huge, sessions=huge)
    return CapacitySettings(
        exact_cache=StoreLimits(max_entries=args.exact_cap, max_bytes=args.exact_bytes),
        semantic_index=StoreLimits(max_entries=args.semantic_cap, max_bytes=args.semantic_bytes),
        sessions=StoreLimits(max_entries=args.session_cap, max_bytes=64 * 1024 * 1024),
    )


async def fill(args: argparse.Namespace, data_dir: Path, redis_url: str | None = None) -> None:
    capacity = capacity_settings(args)
    if redis_url is None:
        settings = StorageSettings(backend="embedded", path=data_dir)
    else:
        settings = StorageSettings(
            backend="redis", redis_url=redis_url, redis_prefix="bench", path=data_dir
        )
    storage = await open_storage(settings, "bench", DIMENSIONS, capacity)
    size_column = "disk MiB" if redis_url is None else "redis MiB"

    async def held_bytes() -> int:
        if redis_url is None:
            return disk_bytes(data_dir)
        import redis.asyncio

        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            return int((await client.info("memory"))["used_memory"])
        finally:
            await client.aclose()

    rng = np.random.default_rng(7)
    print(
        f"{'prompts':>8} {'RSS MiB':>8} {size_column:>9} {'exact':>7} {'semantic':>8} "
        f"{'sessions':>8} {'evicted':>8} {'us/write':>8}"
    )
    started = time.perf_counter()
    step_started = started
    try:
        for index in range(1, args.prompts + 1):
            namespace = f"ns-{index % args.namespaces}"
            key = f"{index:064x}"
            now = time.time()
            await storage.exact.put(
                key,
                CachedCompletion(
                    completion=completion(index),
                    tenant="acme",
                    model="fake-model",
                    created_at=now,
                    namespace={"namespace": namespace},
                ),
                ttl_seconds=86_400,
            )
            vector = rng.standard_normal(DIMENSIONS).astype(np.float32)
            await storage.vectors.add(
                SemanticEntry(
                    entry_id=key,
                    tenant="acme",
                    model="fake-model",
                    fingerprint=f"fp-{namespace}",
                    query_text=f"What is the answer to question number {index}?",
                    completion=completion(index),
                    created_at=now,
                    expires_at=now + 86_400,
                    namespace={"namespace": namespace},
                ),
                vector,
            )
            if index % 10 == 0:
                item = SessionItem(
                    key=key, content=_ANSWER, score=0.9, memory_id=key, created_at=now,
                    admitted_at=now,
                )  # fmt: skip
                await storage.sessions.save("acme", "user", f"s-{index}", [item], 3600)
            if index % args.report_every == 0:
                usage = storage.ledger.usage()
                evicted = sum(storage.ledger.evictions().values())
                per_write_us = (time.perf_counter() - step_started) / args.report_every * 1e6
                print(
                    f"{index:8d} {_mib(rss_bytes())} {_mib(await held_bytes())} "
                    f"{usage['exact'].entries:7d} {usage['semantic'].entries:8d} "
                    f"{usage['sessions'].entries:8d} {evicted:8d} {per_write_us:8.0f}",
                    flush=True,
                )
                step_started = time.perf_counter()
        print(f"total {time.perf_counter() - started:.1f} s; evictions:")
        for (store, reason), count in sorted(storage.ledger.evictions().items()):
            print(f"  {store:9s} {reason:16s} {count}")
    finally:
        await storage.close()


# --- eviction policies on a skewed workload --------------------------------------------


def zipf_trace(keys: int, length: int, exponent: float, seed: int) -> list[int]:
    weights = [1.0 / (rank**exponent) for rank in range(1, keys + 1)]
    return random.Random(seed).choices(range(keys), weights=weights, k=length)


def simulate(trace: list[int], size: int, policy: str) -> float:
    hits = 0
    if policy == "lru":
        lru: OrderedDict[int, None] = OrderedDict()
        for key in trace:
            if key in lru:
                hits += 1
                lru.move_to_end(key)
                continue
            lru[key] = None
            if len(lru) > size:
                lru.popitem(last=False)
    elif policy == "fifo":
        held: set[int] = set()
        order: deque[int] = deque()
        for key in trace:
            if key in held:
                hits += 1
                continue
            held.add(key)
            order.append(key)
            if len(order) > size:
                held.discard(order.popleft())
    else:  # lfu, ties broken by age (oldest first), counts forgotten on eviction
        counts: Counter[int] = Counter()
        stamp: dict[int, int] = {}
        for tick, key in enumerate(trace):
            if key in counts:
                hits += 1
                counts[key] += 1
                continue
            if len(counts) >= size:
                victim = min(counts, key=lambda k: (counts[k], stamp[k]))
                del counts[victim]
                del stamp[victim]
            counts[key] = 1
            stamp[key] = tick
    return hits / len(trace)


async def real_lru_hit_rate(trace: list[int], size: int, data_dir: Path) -> tuple[float, float]:
    """The capped exact cache itself on the trace: hit rate, and microseconds per
    get-or-put."""
    capacity = CapacitySettings(exact_cache=StoreLimits(max_entries=size))
    storage = await open_storage(
        StorageSettings(backend="embedded", path=data_dir), "bench", DIMENSIONS, capacity
    )
    hits = 0
    started = time.perf_counter()
    try:
        for key in trace:
            name = f"{key:064x}"
            if await storage.exact.get(name) is not None:
                hits += 1
                continue
            entry = CachedCompletion(completion(key), "acme", "fake-model", time.time())
            await storage.exact.put(name, entry, ttl_seconds=86_400)
    finally:
        await storage.close()
    elapsed_us = (time.perf_counter() - started) / len(trace) * 1e6
    return hits / len(trace), elapsed_us


async def compare_policies(args: argparse.Namespace) -> None:
    size = args.policy_cache
    keys = size * 10
    print(f"\neviction policies: cache {size} entries, {keys} distinct keys, Zipf traces")
    print(f"{'s':>5} {'LRU (store)':>12} {'LRU':>7} {'LFU':>7} {'FIFO':>7} {'us/op store':>12}")
    for exponent in (0.8, 1.0, 1.2):
        trace = zipf_trace(keys, args.policy_requests, exponent, seed=11)
        with tempfile.TemporaryDirectory(prefix="capacity-lru-") as directory:
            real, per_op = await real_lru_hit_rate(trace, size, Path(directory))
        rates = {policy: simulate(trace, size, policy) for policy in ("lru", "lfu", "fifo")}
        print(
            f"{exponent:5.1f} {real:12.3f} {rates['lru']:7.3f} {rates['lfu']:7.3f} "
            f"{rates['fifo']:7.3f} {per_op:12.0f}",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=100_000)
    parser.add_argument("--namespaces", type=int, default=10_000)
    parser.add_argument("--exact-cap", type=int, default=20_000)
    parser.add_argument("--exact-bytes", type=int, default=1024 * 1024 * 1024)
    parser.add_argument("--semantic-cap", type=int, default=20_000)
    parser.add_argument("--semantic-bytes", type=int, default=512 * 1024 * 1024)
    parser.add_argument("--session-cap", type=int, default=5_000)
    parser.add_argument("--uncapped", action="store_true", help="caps out of reach")
    parser.add_argument("--report-every", type=int, default=10_000)
    parser.add_argument("--only-policies", action="store_true")
    parser.add_argument("--skip-policies", action="store_true")
    parser.add_argument("--policy-cache", type=int, default=1_000)
    parser.add_argument("--policy-requests", type=int, default=50_000)
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a temporary one")
    parser.add_argument("--backend", choices=("embedded", "redis"), default="embedded")
    args = parser.parse_args()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cpus, "
        f"{'uncapped' if args.uncapped else 'capped'}: exact {args.exact_cap}, "
        f"semantic {args.semantic_cap}, sessions {args.session_cap}; "
        f"{args.prompts} prompts over {args.namespaces} namespaces, {args.backend}"
    )
    if not args.only_policies and args.backend == "redis":
        from gateway.testing.redis_server import RedisServer

        with tempfile.TemporaryDirectory(prefix="capacity-redis-") as directory:
            server = RedisServer(log_path=Path(directory) / "redis.log").start()
            try:
                asyncio.run(fill(args, Path(directory), server.url))
            finally:
                server.stop()
    elif not args.only_policies:
        if args.data_dir is not None:
            args.data_dir.mkdir(parents=True, exist_ok=True)
            asyncio.run(fill(args, args.data_dir))
        else:
            with tempfile.TemporaryDirectory(prefix="capacity-") as directory:
                asyncio.run(fill(args, Path(directory)))
    if not args.skip_policies:
        asyncio.run(compare_policies(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
