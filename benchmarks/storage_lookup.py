"""Semantic lookup latency of the vector index alone (no HTTP): embedded vs Redis.

    python benchmarks/storage_lookup.py --sizes 10000,100000 --queries 200 --output lookup.json

Both indexes are loaded with the same unit float32 vectors (numpy, seeded; 512
dimensions by default; `--vectors clustered`, the default, imitates an embedder's
topics, `random` is uniform: see gateway_tools/bench/vector_data.py), and then searched
with `search(fingerprint, query, top_k=5)`, one query at a time, as the gateway does for
each request. Recall@5 of every search is graded against numpy brute force over the
same partition; memory per entry is the growth of this process's RSS (embedded) or of
Redis's used_memory. Two layouts:

- `one`: every entry in a single fingerprint partition: the worst case (one tenant, one
  model, no earlier turns, all prompts alike);
- `spread`: the entries spread evenly over 100 fingerprints (entry i in partition i % 100).

Two kinds of query, each timed: `random`, shown as "miss" (a fresh vector of the same
distribution: the miss path, most requests) and `near` (a stored vector of that
partition plus noise, raw cosine ~0.95 to it: the hit path); for `near`, "found" is
the fraction whose best result is that stored entry (the embedded index is exact; Redis
searches an HNSW graph).

Sizes are cumulative: the indexes are loaded up to the first size, measured, loaded on up
to the next, measured again. Loads run `--batch` adds concurrently (asyncio.gather).

Embedded: one `EmbeddedVectorIndex` per layout, in a temporary directory, loaded through
the gateway's `add`, up to EMBEDDED_LIMIT entries (what it keeps per tenant); larger
sizes time only its exact scan of one partition (`embedded-scan`). Redis: a fresh
Redis 8 with RediSearch on loopback (`gateway.testing.redis_server`, stopped at the end),
keys under a prefix of their own. Redis holds both layouts in ONE index: each entry's
fingerprint tag names its partition in both layouts ("one,spread-17"; the tag field is
comma-separated), and a query filters on one tag exactly as on a one-layout index. That
builds the HNSW graph (the slow part of loading: ~8 ms per insert at 100k entries on a
busy 2-core machine) once instead of twice; Redis is loaded with pipelined HSETs of the
fields `RedisVectorIndex.add` writes (`--hnsw-m`, `--ef-construction`, `--ef-runtime`
set the index's parameters, as `storage.vector_index` does); the graph spans every
entry either way, as it does in the gateway, whose one index holds every fingerprint.
A partition of at most `--exact-scan-max-entries` is scanned exactly, as the gateway
does; rows `redis-graph` search the same index through the graph alone, side by side,
and `partition_count_ms` is what counting a partition of that layout costs (counted
behind its first search, then when the count is old: `partition_count_refresh_seconds`,
longer for a partition far above the limit). `--also-ef-runtime 400,800` adds rows
`redis-graph ef_runtime=N`: the same graph searched wider, so that one long build
measures several search widths. Before the timed queries every partition
is searched once and its count waited for, as in a gateway that has been running.

Redis is searched through a connection with the gateway's default operation timeout
(0.25 s, `storage.redis_timeout_seconds`); a search that times out opens the fail-open
circuit, is counted under "errors" and would have been a cache miss in the gateway.
Loading uses a connection of its own with a longer timeout (`--load-timeout`): a burst of
adds queues behind the HNSW inserts, which is loading, not what is measured here.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import orjson

from gateway.cache.vector_index_settings import VectorIndexSettings
from gateway.settings import StorageSettings
from gateway.storage.embedded.partition import Partition
from gateway.storage.embedded.vectors import EmbeddedVectorIndex
from gateway.storage.index_name import index_name_for
from gateway.storage.protocols import SemanticEntry, StoreUnavailable, VectorIndex
from gateway.storage.redis.backend import RedisBackend
from gateway.testing.redis_server import RedisServer, RedisServerUnavailable
from gateway_tools.bench.procstats import status_kib
from gateway_tools.bench.report import machine, machine_line, say, write_json
from gateway_tools.bench.vector_data import KINDS, VectorSource, exact_top_k, recall

Matrix = npt.NDArray[np.float32]

EMBEDDED, REDIS, EMBEDDED_SCAN = "embedded", "redis", "embedded-scan"
# The same Redis index searched through its graph alone (`exact_scan_max_entries: 0`).
REDIS_GRAPH = "redis-graph"
ONE, SPREAD = "one", "spread"
LAYOUTS = (ONE, SPREAD)
RANDOM, NEAR = "random", "near"
SPREAD_PARTITIONS = 100
TOP_K = 5
RECALL = f"recall_at_{TOP_K}"
# Raw cosine between a `near` query and the stored vector it was made from.
NEAR_COSINE = 0.95
WARMUP_QUERIES = 20
TTL_SECONDS = 86_400.0
REDIS_TIMEOUT_SECONDS: float = StorageSettings.model_fields["redis_timeout_seconds"].default
REDIS_START_SECONDS = 20.0
REDIS_PIPELINE = 500
# The default `capacity.semantic_index.max_entries`: the embedded index is loaded up to
# this size; above it only its exact scan is measured (see measure_scan).
EMBEDDED_LIMIT = 100_000
EMBEDDER = "storage-lookup-bench"
# A small chat completion, about the size the gateway stores.
COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-bench",
    "object": "chat.completion",
    "model": "bench-model",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "A short cached answer. " * 8},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 48, "total_tokens": 60},
}


def _say(message: str) -> None:
    say(message, tag="lookup")


def near_queries(
    rng: np.random.Generator, vectors: Matrix, sources: npt.NDArray[np.int64]
) -> Matrix:
    """Each source vector plus orthogonal noise, at raw cosine NEAR_COSINE to it."""
    base = vectors[sources]
    noise = rng.standard_normal(base.shape, dtype=np.float32)
    noise -= np.sum(noise * base, axis=1, keepdims=True) * base  # orthogonal to base
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    sine = np.float32(np.sqrt(1.0 - NEAR_COSINE**2))
    return (np.float32(NEAR_COSINE) * base + sine * noise).astype(np.float32)


def entry_id(row: int) -> str:
    return f"e{row:07d}"


def row_of(entry: str) -> int:
    return int(entry[1:])


def spread_fingerprint(row: int) -> str:
    return f"spread-{row % SPREAD_PARTITIONS:03d}"


def make_entry(row: int, fingerprint: str, now: float) -> SemanticEntry:
    return SemanticEntry(
        entry_id=entry_id(row),
        tenant="bench",
        model="bench-model",
        fingerprint=fingerprint,
        query_text=f"benchmark question number {row}",
        completion=COMPLETION,
        created_at=now,
        expires_at=now + TTL_SECONDS,
    )


# ------------------------------------------------------------------------ stores


@dataclass(slots=True)
class Store:
    """One backend: how to add entry `row` (to every layout), and the index each layout
    is searched in."""

    backend: str
    add: Callable[[int, Matrix], Awaitable[None]]
    indexes: dict[str, VectorIndex]
    close: Callable[[], Awaitable[None]]
    memory_bytes: Callable[[], Awaitable[int]]  # what the store's entries occupy
    errors: Callable[[], int] = lambda: 0  # failed operations so far (Redis: circuit)
    # Loads rows [start, stop) at once when the backend has a faster way than `add`.
    bulk: Callable[[Matrix, int, int], Awaitable[None]] | None = None
    # Redis: the same index searched through the graph alone, for a side-by-side row.
    graph_indexes: dict[str, VectorIndex] | None = None
    # Redis: the graph searched with other `hnsw_ef_runtime` values (--also-ef-runtime),
    # by label: one build, several search widths side by side.
    wider_graph_indexes: dict[str, dict[str, VectorIndex]] = field(default_factory=dict)
    # Redis: counts a partition as the search does to choose its policy.
    count_partition: Callable[[str], Awaitable[int]] | None = None
    # Redis: waits for the partition counts that searches started in the background.
    settle: Callable[[], Awaitable[None]] | None = None


async def open_embedded(directory: Path, dimensions: int) -> Store:
    name = index_name_for(EMBEDDER, dimensions)
    indexes: dict[str, VectorIndex] = {
        layout: await EmbeddedVectorIndex.open(directory / layout, name) for layout in LAYOUTS
    }
    now = time.time()

    async def add(row: int, vectors: Matrix) -> None:
        await indexes[ONE].add(make_entry(row, ONE, now), vectors[row])
        await indexes[SPREAD].add(make_entry(row, spread_fingerprint(row), now), vectors[row])

    async def close() -> None:
        for index in indexes.values():
            await index.close()

    async def rss_bytes() -> int:
        # Both layouts' indexes live in this process: divided by two in the report.
        return status_kib(os.getpid(), "VmRSS") * 1024

    return Store(EMBEDDED, add, indexes, close, rss_bytes)


async def open_redis(
    url: str,
    dimensions: int,
    load_timeout: float,
    hnsw: VectorIndexSettings,
    also_ef_runtime: Sequence[int] = (),
) -> Store:
    prefix = f"lookup-{secrets.token_hex(4)}"
    name = index_name_for(EMBEDDER, dimensions)

    async def backend(timeout_seconds: float, settings: VectorIndexSettings) -> RedisBackend:
        return await RedisBackend.open(
            url,
            prefix=prefix,
            index_name=name,
            dimensions=dimensions,
            operation_timeout_seconds=timeout_seconds,
            vector_index=settings,
        )

    loader = await backend(load_timeout, hnsw)
    searcher = await backend(REDIS_TIMEOUT_SECONDS, hnsw)
    graph_only = await backend(
        REDIS_TIMEOUT_SECONDS, hnsw.model_copy(update={"exact_scan_max_entries": 0})
    )
    wider = {
        f"{REDIS_GRAPH} ef_runtime={ef}": await backend(
            REDIS_TIMEOUT_SECONDS,
            hnsw.model_copy(update={"exact_scan_max_entries": 0, "hnsw_ef_runtime": ef}),
        )
        for ef in also_ef_runtime
    }
    now = time.time()

    async def add(row: int, vectors: Matrix) -> None:
        # Both layouts in one index: the tag field splits "one,spread-017" in two tags.
        fingerprint = f"{ONE},{spread_fingerprint(row)}"
        await loader.semantic.add(make_entry(row, fingerprint, now), vectors[row])

    async def bulk(vectors: Matrix, start: int, stop: int) -> None:
        # The fields `RedisVectorIndex.add` writes, HSET in pipelines of REDIS_PIPELINE
        # (one round trip each, not one per entry): loading, not the measured path.
        index, client = loader.semantic, loader.connection.client
        completion = orjson.dumps(COMPLETION)
        for first in range(start, stop, REDIS_PIPELINE):
            async with client.pipeline(transaction=False) as pipe:
                for row in range(first, min(first + REDIS_PIPELINE, stop)):
                    entry = make_entry(row, f"{ONE},{spread_fingerprint(row)}", now)
                    mapping: dict[Any, Any] = {
                        "entry_id": entry.entry_id, "tenant": entry.tenant,
                        "model": entry.model, "fingerprint": entry.fingerprint,
                        "policy_version": entry.policy_version, "namespace": b"{}",
                        "query_text": entry.query_text, "completion": completion,
                        "created_at": entry.created_at, "expires_at": entry.expires_at,
                        "embedding": vectors[row].astype("<f4").tobytes(),
                    }  # fmt: skip
                    pipe.hset(index.key_for(entry.entry_id), mapping=mapping)
                    pipe.pexpire(index.key_for(entry.entry_id), int(TTL_SECONDS * 1000))
                await pipe.execute()

    async def used_memory() -> int:
        info = await loader.connection.client.info("memory")
        return int(info["used_memory"])

    async def close() -> None:
        for extra in wider.values():
            await extra.close()
        await graph_only.close()
        await searcher.close()
        await loader.close()

    return Store(
        REDIS,
        add,
        {ONE: searcher.semantic, SPREAD: searcher.semantic},
        close,
        used_memory,
        errors=lambda: sum(
            b.connection.failures_total for b in (searcher, graph_only, *wider.values())
        ),
        bulk=bulk,
        graph_indexes=(
            {ONE: graph_only.semantic, SPREAD: graph_only.semantic}
            if hnsw.exact_scan_limit(dimensions) > 0
            else None
        ),
        count_partition=searcher.semantic.count_partition,
        settle=searcher.semantic.partition_counts_settled,
        wider_graph_indexes={
            label: {ONE: extra.semantic, SPREAD: extra.semantic} for label, extra in wider.items()
        },
    )


# ------------------------------------------------------------------- measurement


@dataclass(slots=True)
class Timings:
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    found: int = 0  # near queries whose best result is their source entry
    first_error: str | None = None
    returned: list[list[int]] = field(default_factory=list)  # rows found, per query

    def summary(self, with_found: bool, truth: list[list[int]]) -> dict[str, Any]:
        values = self.latencies_ms
        p99 = (
            statistics.quantiles(values, n=100, method="inclusive")[98]
            if len(values) > 1
            else (values[0] if values else None)
        )
        result: dict[str, Any] = {
            "n": len(values),
            "p50": round(statistics.median(values), 3) if values else None,
            "p99": None if p99 is None else round(p99, 3),
            "max": round(max(values), 3) if values else None,
            "errors": self.errors,
            "first_error": self.first_error,
            # A failed search returned nothing: it counts as recall 0.
            f"recall_at_{TOP_K}": recall(self.returned, truth),
        }
        if with_found:
            answered = len(values)
            result["found"] = round(self.found / answered, 4) if answered else None
        return result


class Searchable(Protocol):
    async def search(
        self, fingerprint: str, vector: Matrix, top_k: int
    ) -> list[tuple[SemanticEntry, float]]: ...


async def timed_searches(
    index: Searchable,
    fingerprints: Sequence[str],
    queries: Matrix,
    expected: Sequence[str] | None,
) -> Timings:
    """One search at a time; a failed one (Redis: timeout, open circuit) is an error."""
    timings = Timings()
    for i, fingerprint in enumerate(fingerprints):
        started = time.perf_counter()
        try:
            hits = await index.search(fingerprint, queries[i], TOP_K)
        except StoreUnavailable as exc:
            timings.errors += 1
            timings.first_error = timings.first_error or f"{exc}: {exc.__cause__!r}"
            timings.returned.append([])
            continue
        timings.latencies_ms.append((time.perf_counter() - started) * 1000)
        timings.returned.append([row_of(hit.entry_id) for hit, _ in hits])
        if expected is not None and hits and hits[0][0].entry_id == expected[i]:
            timings.found += 1
    return timings


def fingerprints_for(layout: str, rows: npt.NDArray[np.int64]) -> list[str]:
    if layout == ONE:
        return [ONE] * len(rows)
    return [spread_fingerprint(int(row)) for row in rows]


def true_neighbours(
    vectors: Matrix, size: int, layout: str, targets: npt.NDArray[np.int64], queries: Matrix
) -> list[list[int]]:
    """Exact top-k of each query within the partition it is searched in."""
    if layout == ONE:
        return exact_top_k(vectors[:size], None, queries, TOP_K)
    truth: list[list[int]] = []
    for target, query in zip(targets.tolist(), queries, strict=True):
        rows = np.arange(target % SPREAD_PARTITIONS, size, SPREAD_PARTITIONS)
        truth += exact_top_k(vectors, rows, query[None, :], TOP_K)
    return truth


class LoadFailed(RuntimeError):
    """An add failed while loading (Redis: a timeout opened the circuit)."""


async def load(store: Store, vectors: Matrix, start: int, stop: int, batch: int) -> float:
    started = time.perf_counter()
    step = max(batch, 50_000) if store.bulk is not None else batch
    for first in range(start, stop, step):
        last = min(first + step, stop)
        try:
            if store.bulk is not None:
                await store.bulk(vectors, first, last)
            else:
                await asyncio.gather(*(store.add(row, vectors) for row in range(first, last)))
        except StoreUnavailable as exc:
            raise LoadFailed(
                f"{store.backend}: an add failed at about entry {first} after "
                f"{time.perf_counter() - started:.1f} s ({exc}: {exc.__cause__!r}); "
                "a longer --load-timeout or a smaller --batch avoids it"
            ) from exc
        if store.bulk is not None:
            _say(f"{store.backend}: {last} entries ({time.perf_counter() - started:.0f} s)")
    return time.perf_counter() - started


@dataclass(slots=True)
class QuerySet:
    """The same queries for every backend at one size: seeded by (seed, size)."""

    fresh: Matrix  # miss path: a new vector from the data's distribution
    fresh_targets: npt.NDArray[np.int64]  # picks the spread partition searched
    near: Matrix
    sources: npt.NDArray[np.int64]
    warm: Matrix

    @classmethod
    def make(
        cls, source: VectorSource, vectors: Matrix, size: int, queries: int, seed: int
    ) -> QuerySet:
        rng = np.random.default_rng([seed, size])
        fresh = source.draw(rng, queries)
        targets = rng.integers(0, size, queries)
        sources = rng.integers(0, size, queries)
        near = near_queries(rng, vectors, sources)
        warm = source.draw(rng, WARMUP_QUERIES)
        return cls(fresh, targets, near, sources, warm)


async def measure_layout(
    index: Searchable,
    layout: str,
    queries: QuerySet,
    settle: Callable[[], Awaitable[None]] | None = None,
) -> tuple[Timings, Timings]:
    warm_targets = queries.fresh_targets[:WARMUP_QUERIES]
    await timed_searches(index, fingerprints_for(layout, warm_targets), queries.warm, None)
    # One search of every partition first, as in a running gateway: Redis counts a
    # partition behind its first search (to choose exact scan or graph), then when old.
    partitions = fingerprints_for(layout, np.arange(SPREAD_PARTITIONS, dtype=np.int64))
    await timed_searches(index, partitions, np.repeat(queries.warm[:1], len(partitions), 0), None)
    if settle is not None:
        await settle()
    fresh = await timed_searches(
        index, fingerprints_for(layout, queries.fresh_targets), queries.fresh, None
    )
    expected = [entry_id(int(row)) for row in queries.sources]
    near = await timed_searches(
        index, fingerprints_for(layout, queries.sources), queries.near, expected
    )
    return fresh, near


async def measure_store(
    store: Store,
    source: VectorSource,
    vectors: Matrix,
    sizes: Sequence[int],
    queries: int,
    batch: int,
    seed: int,
) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    loaded, load_seconds = 0, 0.0
    memory_before = await store.memory_bytes()
    # Both layouts are held twice by the embedded store, once by Redis (one index).
    copies = len(LAYOUTS) if store.backend == EMBEDDED else 1
    for size in sizes:
        _say(f"{store.backend}: loading entries {loaded}-{size}")
        load_seconds += await load(store, vectors, loaded, size, batch)
        loaded = size
        memory_per_entry = (await store.memory_bytes() - memory_before) / (size * copies)
        _say(f"{store.backend}: {size} entries loaded ({load_seconds:.1f} s so far); searching")
        count = await store.indexes[ONE].count()
        if count != size:
            raise RuntimeError(f"{store.backend}: the index holds {count} entries, not {size}")
        query_set = QuerySet.make(source, vectors, size, queries, seed)
        variants = [(store.backend, store.indexes)]
        if store.graph_indexes is not None:
            variants.append((REDIS_GRAPH, store.graph_indexes))
        variants += list(store.wider_graph_indexes.items())
        for layout in LAYOUTS:
            for label, indexes in variants:
                errors_before = store.errors()
                fresh, near = await measure_layout(indexes[layout], layout, query_set, store.settle)
                row = result_row(label, layout, size, load_seconds, vectors, query_set, fresh, near)
                row["memory_bytes_per_entry"] = round(memory_per_entry)
                row["store_failures"] = store.errors() - errors_before
                if store.count_partition is not None:
                    row["partition_count_ms"] = await _count_ms(store.count_partition, layout)
                results.append(say_row(row))
    return results


async def _count_ms(count: Callable[[str], Awaitable[int]], layout: str) -> float | None:
    """Median time of counting one partition of the layout (5 counts); None when a
    count failed (over the operation timeout: the gateway then leaves the policy to
    RediSearch), which is reported rather than ending the run after the long load."""
    fingerprint = ONE if layout == ONE else spread_fingerprint(0)
    times: list[float] = []
    for _ in range(5):
        started = time.perf_counter()
        try:
            await count(fingerprint)
        except Exception as exc:
            say(f"counting the {layout} partition failed ({type(exc).__name__})")
            return None
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 3)


def result_row(
    backend: str,
    layout: str,
    size: int,
    load_seconds: float,
    vectors: Matrix,
    query_set: QuerySet,
    fresh: Timings,
    near: Timings,
) -> dict[str, Any]:
    fresh_truth = true_neighbours(vectors, size, layout, query_set.fresh_targets, query_set.fresh)
    near_truth = true_neighbours(vectors, size, layout, query_set.sources, query_set.near)
    row: dict[str, Any] = {
        "backend": backend,
        "layout": layout,
        "entries": size,
        "partition_entries": size if layout == ONE else size // SPREAD_PARTITIONS,
        "load_seconds": round(load_seconds, 2),
        RANDOM: fresh.summary(with_found=False, truth=fresh_truth),
        NEAR: near.summary(with_found=True, truth=near_truth),
    }
    return row


def say_row(row: dict[str, Any]) -> dict[str, Any]:
    """The row as a progress line too: a long run that is stopped still leaves its
    numbers so far."""
    miss, near = row[RANDOM], row[NEAR]
    _say(
        f"{row['backend']} {row['layout']} {row['entries']}: miss p50/p99 {miss['p50']}/"
        f"{miss['p99']} ms, near p50/p99 {near['p50']}/{near['p99']} ms, recall@{TOP_K} "
        f"{miss[RECALL]}/{near[RECALL]}, found {near['found']}, "
        f"{row['memory_bytes_per_entry']} bytes/entry, load {row['load_seconds']} s"
    )
    return row


class ScanIndex:
    """The embedded index's search over one partition, without SQLite: what a lookup
    costs in a partition of that size (the row fetch for the few winners adds ~10 us
    each). Used above EMBEDDED_LIMIT, where loading the full store is not the point."""

    def __init__(self, vectors: Matrix, size: int, layout: str) -> None:
        self._partitions: dict[str, Partition] = {}
        groups = [(ONE, np.arange(size))] if layout == ONE else [
            (spread_fingerprint(p), np.arange(p, size, SPREAD_PARTITIONS))
            for p in range(SPREAD_PARTITIONS)
        ]  # fmt: skip
        for fingerprint, rows in groups:
            partition = Partition(vectors.shape[1], len(rows))
            partition.vectors[: len(rows)] = vectors[rows]
            partition.expires[: len(rows)] = math.inf
            partition.ids = [entry_id(int(row)) for row in rows]
            partition.size = len(rows)
            self._partitions[fingerprint] = partition

    async def search(
        self, fingerprint: str, vector: Matrix, top_k: int
    ) -> list[tuple[SemanticEntry, float]]:
        hits = self._partitions[fingerprint].search(vector, top_k, time.time())
        return [(make_entry(row_of(i), fingerprint, 0.0), score) for i, score in hits]


async def measure_scan(
    source: VectorSource, vectors: Matrix, sizes: Sequence[int], queries: int, seed: int
) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for size in sizes:
        query_set = QuerySet.make(source, vectors, size, queries, seed)
        for layout in LAYOUTS:
            memory_before = status_kib(os.getpid(), "VmRSS") * 1024
            scan = ScanIndex(vectors, size, layout)
            memory_per_entry = (status_kib(os.getpid(), "VmRSS") * 1024 - memory_before) / size
            fresh, near = await measure_layout(scan, layout, query_set)
            del scan
            row = result_row(EMBEDDED_SCAN, layout, size, 0.0, vectors, query_set, fresh, near)
            row["memory_bytes_per_entry"] = round(memory_per_entry)
            row["store_failures"] = 0
            results.append(say_row(row))
    return results


async def run(
    sizes: Sequence[int],
    queries: int,
    dimensions: int,
    batch: int,
    seed: int,
    backends: Sequence[str],
    load_timeout: float,
    workdir: Path,
    redis_url: str | None,
    kind: str,
    hnsw: VectorIndexSettings,
    also_ef_runtime: Sequence[int] = (),
) -> list[dict[str, Any]]:
    _say(f"{sizes[-1]} {kind} unit vectors of {dimensions} dimensions (seed {seed})")
    source = VectorSource(kind, sizes[-1], dimensions, seed)
    vectors = source.draw(np.random.default_rng(seed), sizes[-1])
    results: list[dict[str, Any]] = []
    for backend in backends:
        if backend == EMBEDDED:
            store = await open_embedded(workdir / "embedded", dimensions)
            loaded_sizes = [size for size in sizes if size <= EMBEDDED_LIMIT]
        else:
            assert redis_url is not None
            store = await open_redis(redis_url, dimensions, load_timeout, hnsw, also_ef_runtime)
            loaded_sizes = list(sizes)
        try:
            results += await measure_store(
                store, source, vectors, loaded_sizes, queries, batch, seed
            )
        finally:
            await store.close()
        if backend == EMBEDDED and len(loaded_sizes) < len(sizes):
            scanned = [size for size in sizes if size > EMBEDDED_LIMIT]
            results += await measure_scan(source, vectors, scanned, queries, seed)
    return results


# ------------------------------------------------------------------------ report


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def render_table(report: dict[str, Any]) -> str:
    host = report["machine"]
    lines = [
        "## semantic index lookup (no HTTP)",
        "",
        machine_line(host),
        f"{report['dimensions']}-dim {report['vectors']} unit float32 vectors "
        f"(seed {report['seed']}); Redis HNSW {report['hnsw']}; "
        f"search(fingerprint, query, top_k={report['top_k']}), one at a time, "
        f"{report['queries']} queries per kind; Redis searched with a "
        f"{report['redis_timeout_seconds']} s operation timeout",
        "miss: a fresh vector from the same distribution (miss path); near: a stored vector "
        f"of the partition plus noise, cosine {NEAR_COSINE} (hit path); found: best result "
        f"is that entry; recall: recall@{TOP_K} against numpy brute force (miss/near)",
        "",
        "| backend | layout | entries | per partition | load s | miss p50 ms | miss p99 ms "
        "| near p50 ms | near p99 ms | near found | recall | bytes/entry | count ms | errors |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in report["results"]:
        rnd, near = row[RANDOM], row[NEAR]
        errors = rnd["errors"] + near["errors"]
        recalls = f"{_fmt(rnd[RECALL], 3)}/{_fmt(near[RECALL], 3)}"
        lines.append(
            f"| {row['backend']} | {row['layout']} | {row['entries']} "
            f"| {row['partition_entries']} | {row['load_seconds']:.1f} "
            f"| {_fmt(rnd['p50'])} | {_fmt(rnd['p99'])} | {_fmt(near['p50'])} "
            f"| {_fmt(near['p99'])} | {_fmt(near['found'], 3)} | {recalls} "
            f"| {row['memory_bytes_per_entry']} | {_fmt(row.get('partition_count_ms'))} "
            f"| {errors} |"
        )
    lines += [
        "",
        "load s: cumulative time to load the index up to that size "
        f"({report['batch']} concurrent adds); embedded loads each layout's index on its "
        "own (the time covers both), Redis loads both layouts into one index with "
        f"pipelined HSETs ({REDIS_PIPELINE} a round trip).",
        "bytes/entry: embedded, this process's RSS growth per entry and layout (vectors, "
        "ids, bookkeeping); Redis, used_memory growth per entry (hash with the completion, "
        "the index's vector copy, HNSW graph, tags).",
        f"embedded-scan: above {EMBEDDED_LIMIT} entries (the default cap) only the "
        "embedded index's exact scan of one partition is timed, without SQLite.",
    ]
    if (host["cpu_count"] or 0) < 4:
        lines.append("note: Redis, the client and the embedded index share these few CPUs.")
    return "\n".join(lines)


def _sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}") from None
    if not sizes or sizes[0] < SPREAD_PARTITIONS:
        raise argparse.ArgumentTypeError(f"sizes must be at least {SPREAD_PARTITIONS}")
    return sizes


def _ef_values(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
        for value in values:
            VectorIndexSettings(hnsw_ef_runtime=value)  # its range, its message
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not hnsw_ef_runtime values: {text!r} ({exc})") from None
    return values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sizes", type=_sizes, default=[10_000, 100_000], help="entries, comma-separated"
    )
    parser.add_argument("--queries", type=int, default=200, help="timed queries per kind")
    parser.add_argument("--dimensions", type=int, default=512)
    parser.add_argument("--batch", type=int, default=200, help="concurrent adds while loading")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument(
        "--backend", choices=(EMBEDDED, REDIS, "both"), default="both", help="default: both"
    )
    parser.add_argument(
        "--load-timeout",
        type=float,
        default=10.0,
        help="Redis operation timeout while loading, in seconds (searches use the "
        f"gateway's default, {REDIS_TIMEOUT_SECONDS} s)",
    )
    parser.add_argument(
        "--vectors", choices=KINDS, default="clustered", help="synthetic data (vector_data.py)"
    )
    defaults = VectorIndexSettings()
    parser.add_argument("--hnsw-m", type=int, default=defaults.hnsw_m)
    parser.add_argument("--ef-construction", type=int, default=defaults.hnsw_ef_construction)
    parser.add_argument("--ef-runtime", type=int, default=defaults.hnsw_ef_runtime)
    parser.add_argument(
        "--also-ef-runtime",
        type=_ef_values,
        default=[],
        help="Redis: also search the graph alone with these hnsw_ef_runtime values, "
        "comma-separated (rows 'redis-graph ef_runtime=N'): one build, several widths",
    )
    parser.add_argument(
        "--exact-scan-max-entries",
        type=int,
        help="Redis scans a partition this small exactly (default: the gateway's, "
        "by dimensions); the graph alone is measured beside it as redis-graph "
        "(0: graph only, no side-by-side rows)",
    )
    parser.add_argument("--output", help="also write the results as JSON to this path")
    args = parser.parse_args()
    if args.queries < 1 or args.dimensions < 2 or args.batch < 1:
        parser.error("--queries, --batch must be positive and --dimensions at least 2")
    backends = (EMBEDDED, REDIS) if args.backend == "both" else (args.backend,)
    try:
        hnsw = VectorIndexSettings(
            hnsw_m=args.hnsw_m,
            hnsw_ef_construction=args.ef_construction,
            hnsw_ef_runtime=args.ef_runtime,
            exact_scan_max_entries=args.exact_scan_max_entries,
        )
    except ValueError as exc:
        parser.error(str(exc))
    started = time.monotonic()
    redis: RedisServer | None = None
    with tempfile.TemporaryDirectory(prefix="storage-lookup-") as tmp:
        workdir = Path(tmp)
        try:
            if REDIS in backends:
                _say("starting Redis (redis-server with the RediSearch module) on loopback")
                redis = RedisServer(log_path=workdir / "redis.log").start(REDIS_START_SECONDS)
            results = asyncio.run(
                run(
                    args.sizes,
                    args.queries,
                    args.dimensions,
                    args.batch,
                    args.seed,
                    backends,
                    args.load_timeout,
                    workdir,
                    redis.url if redis is not None else None,
                    args.vectors,
                    hnsw,
                    args.also_ef_runtime,
                )
            )
        except RedisServerUnavailable as exc:
            print(f"storage_lookup: cannot start Redis: {exc}", file=sys.stderr)
            return 1
        except LoadFailed as exc:
            print(f"storage_lookup: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("storage_lookup: interrupted", file=sys.stderr)
            return 130
        finally:
            if redis is not None:
                redis.stop()
    report: dict[str, Any] = {
        "machine": machine(),
        "dimensions": args.dimensions,
        "queries": args.queries,
        "top_k": TOP_K,
        "seed": args.seed,
        "vectors": args.vectors,
        "hnsw": hnsw.model_dump(),
        "batch": args.batch,
        "redis_timeout_seconds": REDIS_TIMEOUT_SECONDS,
        "redis_load_timeout_seconds": args.load_timeout,
        "seconds": round(time.monotonic() - started, 1),
        "results": results,
    }
    print(render_table(report), flush=True)
    if args.output:
        write_json(args.output, report, tag="lookup")
    failed = sum(r[RANDOM]["errors"] + r[NEAR]["errors"] for r in results)
    if failed:
        print(f"FAIL: {failed} searches failed (see errors)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
