"""Measurements: latency series, priming, closed-loop throughput."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from gateway_tools.bench.constants import (
    MISS,
    PRIME_SECONDS,
    REQUEST_TIMEOUT_SECONDS,
    SEMANTIC,
    SEQUENTIAL_PHASE_SECONDS,
    THROUGHPUT_SECONDS,
    BenchError,
)
from gateway_tools.bench.formatting import fmt_counts, ranked_counts
from gateway_tools.bench.http_client import REQUEST_FAILURES, Endpoint, HttpConnection
from gateway_tools.bench.prompts import MissPrompts


@dataclass(slots=True)
class Series:
    """Latencies of the requests that succeeded, and what went wrong with the others."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    # Answered 200, but `x-gateway-cache` was not the layer the phase is about.
    wrong_layer: int = 0
    # Of every 200 answer: `x-gateway-cache`, and "layer/reason" where a reason came.
    layers: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    # `x-gateway-similarity` of semantic hits.
    similarities: list[float] = field(default_factory=list)
    first_error: str | None = None

    def fail(self, reason: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = reason

    def record(self, headers: Mapping[str, str], expect_layer: str | None) -> None:
        layer = headers.get("x-gateway-cache", "(none)")
        if expect_layer is not None and layer != expect_layer:
            self.wrong_layer += 1
        self.layers[layer] += 1
        if "x-gateway-cache-reason" in headers:
            self.reasons[f"{layer}/{headers['x-gateway-cache-reason']}"] += 1
        similarity = headers.get("x-gateway-similarity")
        if similarity is not None:
            with contextlib.suppress(ValueError):
                self.similarities.append(float(similarity))


def check_warm_up(phase: str, series: Series) -> None:
    """Stop at once if a warm-up phase failed or was answered by another layer."""
    if series.errors:
        raise BenchError(f"warm-up {phase} failed: {series.first_error}")
    if series.wrong_layer:
        raise BenchError(
            f"warm-up {phase}: {series.wrong_layer} of {len(series.latencies_ms)} answers "
            f"came from another cache layer (layers: {fmt_counts(ranked_counts(series.layers))}; "
            f"reasons: {fmt_counts(ranked_counts(series.reasons))}): the measurements would "
            "describe another path than their label"
        )


async def timed_call(
    connection: HttpConnection,
    endpoint: Endpoint,
    body: bytes,
    expect_layer: str | None,
    series: Series,
) -> None:
    """One request; its latency goes into `series`, or its failure is counted there."""
    started = time.perf_counter()
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
            response = await connection.request(endpoint.head, body)
    except REQUEST_FAILURES as exc:
        series.fail(f"{endpoint.name}: {type(exc).__name__}: {exc}")
        return
    elapsed_ms = (time.perf_counter() - started) * 1000
    if response.status != 200:
        series.fail(f"{endpoint.name}: HTTP {response.status}: {response.body[:200]!r}")
        return
    series.record(response.headers, expect_layer)
    series.latencies_ms.append(elapsed_ms)


async def interleaved_misses(
    direct: Endpoint, gateway: Endpoint, count: int, prompts: MissPrompts
) -> tuple[Series, Series]:
    """Direct and gateway requests alternate, one by one, with the same unique prompts."""
    direct_series, gateway_series = Series(), Series()
    direct_conn, gateway_conn = await direct.connect(), await gateway.connect()
    deadline = time.monotonic() + SEQUENTIAL_PHASE_SECONDS
    try:
        for _ in range(count):
            if time.monotonic() > deadline:
                break
            body = prompts.body()
            await timed_call(direct_conn, direct, body, None, direct_series)
            await timed_call(gateway_conn, gateway, body, MISS, gateway_series)
    finally:
        await direct_conn.close()
        await gateway_conn.close()
    return direct_series, gateway_series


async def repeated_hits(gateway: Endpoint, body: bytes, layer: str, count: int) -> Series:
    """The same request `count` times, each expected from `layer`; the caller primed it."""
    series = Series()
    connection = await gateway.connect()
    deadline = time.monotonic() + SEQUENTIAL_PHASE_SECONDS
    try:
        for _ in range(count):
            if time.monotonic() > deadline:
                break
            await timed_call(connection, gateway, body, layer, series)
    finally:
        await connection.close()
    return series


async def first_seen_hits(
    gateway: Endpoint, pairs: Sequence[tuple[bytes, bytes]], settle_seconds: float
) -> Series:
    """Semantic hits on paraphrases the gateway has never seen: every question of
    `pairs` is sent once (a miss, stored after its answer), then, `settle_seconds` later,
    each paraphrase once, expected from the semantic layer. Unlike `repeated_hits` on
    one paraphrase, which after its first request is served from the per-text memos
    (the ask's embedding and its entity parse), each of these pays what a new wording
    of a stored question costs: the embedding, the search and the entity comparison
    over a fresh parse."""
    priming, series = Series(), Series()
    connection = await gateway.connect()
    try:
        for question, _ in pairs:
            await timed_call(connection, gateway, question, MISS, priming)
        if priming.errors or priming.wrong_layer:
            raise BenchError(
                "priming the first-seen paraphrases failed: "
                f"{priming.first_error or fmt_counts(ranked_counts(priming.layers))}"
            )
        # The stores run after each answer is sent; the last ones land within this.
        await asyncio.sleep(settle_seconds)
        deadline = time.monotonic() + SEQUENTIAL_PHASE_SECONDS
        for _, paraphrase in pairs:
            if time.monotonic() > deadline:
                break
            await timed_call(connection, gateway, paraphrase, SEMANTIC, series)
    finally:
        await connection.close()
    return series


async def prime(gateway: Endpoint, body: bytes, probe: bytes, layer: str) -> None:
    """Send `body` (a miss, stored after its answer is sent), then wait until `probe` is
    served from `layer`. Probes are sent `no-store`, so a probe that still misses does not
    put its own answer in the cache."""
    series = Series()
    connection = await gateway.connect()
    try:
        await timed_call(connection, gateway, body, MISS, series)
        if series.errors:
            raise BenchError(f"priming the {layer} cache failed: {series.first_error}")
        if series.wrong_layer:
            raise BenchError(
                f"priming the {layer} cache failed: the priming request was answered as "
                f"{fmt_counts(ranked_counts(series.reasons or series.layers))}, not as a miss"
            )
        deadline = time.monotonic() + PRIME_SECONDS
        answer = "no answer"
        while time.monotonic() < deadline:
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
                    response = await connection.request(gateway.no_store_head, probe)
            except REQUEST_FAILURES as exc:
                raise BenchError(f"priming the {layer} cache failed: {exc!r}") from exc
            cache = response.headers.get("x-gateway-cache")
            if response.status == 200 and cache == layer:
                return
            reason = response.headers.get("x-gateway-cache-reason")
            answer = f"HTTP {response.status}, x-gateway-cache {cache}, reason {reason}"
            await asyncio.sleep(0.02)
    finally:
        await connection.close()
    raise BenchError(
        f"priming the {layer} cache failed: after {PRIME_SECONDS:.0f} s the probe is still "
        f"answered with {answer}"
    )


@dataclass(slots=True)
class Throughput:
    layer: str  # the layer every answer should come from
    concurrency: int
    seconds: float
    series: Series

    @property
    def completed(self) -> int:
        return len(self.series.latencies_ms)

    @property
    def rps(self) -> float:
        return self.completed / self.seconds if self.seconds > 0 else 0.0


async def throughput(
    gateway: Endpoint,
    concurrency: int,
    body_for: Callable[[int], bytes],
    expect_layer: str,
    max_requests: int,
    seconds: float = THROUGHPUT_SECONDS,
) -> Throughput:
    """Closed loop: `concurrency` workers, each on its own connection, until N or
    `seconds`."""
    series = Series()
    issued = 0
    # Every connection is open before the clock starts: connection setup is not the
    # steady-state cost being measured.
    connections = [await gateway.connect() for _ in range(concurrency)]
    deadline = time.monotonic() + seconds

    async def worker(connection: HttpConnection) -> None:
        nonlocal issued
        while issued < max_requests and time.monotonic() < deadline:
            index = issued
            issued += 1
            await timed_call(connection, gateway, body_for(index), expect_layer, series)

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(c) for c in connections))
    finally:
        seconds = time.perf_counter() - started
        await asyncio.gather(*(c.close() for c in connections))
    return Throughput(expect_layer, concurrency, seconds, series)
