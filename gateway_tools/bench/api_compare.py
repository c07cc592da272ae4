"""`gateway bench --apis`: exact hits, misses and exact-hit throughput through each API,
measured side by side in one run.

The APIs take turns within every round (`rotated`: a different one first each round),
so the machine's noise (other processes, a GC pause, a CPU frequency change) falls on
all of them alike:

1. misses: per round one call straight to the upstream (chat completions, what every
   door forwards as), then one new prompt through each API; an API's miss overhead is
   its miss latency minus that direct series;
2. exact hits: per round the primed question once through each API;
3. exact hits per second at `HIGH_CONCURRENCY`: `THROUGHPUT_SLICES` slices per API,
   the APIs taking turns slice by slice; an API's rate is its requests over its time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway_tools.bench.apis import APIS, CHAT, rotated
from gateway_tools.bench.constants import (
    EXACT,
    EXACT_PROMPT,
    HIGH_CONCURRENCY,
    MISS,
    PRIME_SECONDS,
    SEQUENTIAL_PHASE_SECONDS,
    THROUGHPUT_REQUESTS_PER_N,
    THROUGHPUT_SECONDS,
    BenchError,
)
from gateway_tools.bench.formatting import fmt_counts, ranked_counts
from gateway_tools.bench.http_client import Endpoint, HttpConnection
from gateway_tools.bench.measure import (
    Series,
    Throughput,
    check_warm_up,
    throughput,
    timed_call,
)
from gateway_tools.bench.prompts import MissPrompts
from gateway_tools.bench.report import say

API_WARMUP_ROUNDS = 20
THROUGHPUT_SLICES = 3


@dataclass(slots=True)
class ApiSeries:
    """What one API's requests got in the comparison."""

    hits: Series
    misses: Series
    hit_throughput: Throughput


@dataclass(slots=True)
class ApiComparison:
    direct: Series  # the upstream called directly, interleaved with the misses
    apis: dict[str, ApiSeries]
    concurrency: int


def api_endpoint(name: str, port: int, api_key: str) -> Endpoint:
    api = APIS[name]
    return Endpoint(
        f"gateway {name}", port, api_key, path=api.path, extra_headers=api.extra_headers
    )


def merge_series(into: Series, other: Series) -> None:
    into.latencies_ms.extend(other.latencies_ms)
    into.errors += other.errors
    into.wrong_layer += other.wrong_layer
    into.layers.update(other.layers)
    into.reasons.update(other.reasons)
    into.similarities.extend(other.similarities)
    if into.first_error is None:
        into.first_error = other.first_error


async def _open(endpoints: dict[str, Endpoint]) -> dict[str, HttpConnection]:
    return {name: await endpoint.connect() for name, endpoint in endpoints.items()}


async def _close(connections: dict[str, HttpConnection]) -> None:
    for connection in connections.values():
        await connection.close()


async def interleaved_api_misses(
    direct: Endpoint,
    endpoints: dict[str, Endpoint],
    rounds: int,
    prompts: MissPrompts,
) -> tuple[Series, dict[str, Series]]:
    """Per round: the upstream directly, then each API with a prompt of its own (a
    prompt asked through one API would be a hit through another: the cache is shared)."""
    direct_series, series = Series(), {name: Series() for name in endpoints}
    connections = await _open({"direct": direct, **endpoints})
    deadline = time.monotonic() + SEQUENTIAL_PHASE_SECONDS * len(endpoints)
    try:
        for index in range(rounds):
            if time.monotonic() > deadline:
                break
            body = APIS[CHAT].body(prompts.next_prompt())
            await timed_call(connections["direct"], direct, body, None, direct_series)
            for name in rotated(list(endpoints), index):
                body = APIS[name].body(prompts.next_prompt())
                await timed_call(connections[name], endpoints[name], body, MISS, series[name])
    finally:
        await _close(connections)
    return direct_series, series


async def interleaved_api_hits(
    endpoints: dict[str, Endpoint], bodies: dict[str, bytes], rounds: int
) -> dict[str, Series]:
    """Per round: the primed question once through each API, each from the exact cache."""
    series = {name: Series() for name in endpoints}
    connections = await _open(endpoints)
    deadline = time.monotonic() + SEQUENTIAL_PHASE_SECONDS * len(endpoints)
    try:
        for index in range(rounds):
            if time.monotonic() > deadline:
                break
            for name in rotated(list(endpoints), index):
                await timed_call(
                    connections[name], endpoints[name], bodies[name], EXACT, series[name]
                )
    finally:
        await _close(connections)
    return series


async def prime_exact(endpoint: Endpoint, body: bytes) -> None:
    """Make `body` an exact hit: ask it (a miss stores its answer once it is sent), then
    again until the exact cache answers. It may do so at once: the same question asked
    through another API shares that API's entry when it translates to the same body."""
    deadline = time.monotonic() + PRIME_SECONDS
    connection = await endpoint.connect()
    try:
        while True:
            series = Series()
            await timed_call(connection, endpoint, body, EXACT, series)
            if series.errors:
                raise BenchError(f"priming {endpoint.name} failed: {series.first_error}")
            if not series.wrong_layer:
                return
            if time.monotonic() > deadline:
                raise BenchError(
                    f"priming {endpoint.name} failed: after {PRIME_SECONDS:.0f} s still "
                    f"answered as {fmt_counts(ranked_counts(series.reasons or series.layers))}"
                )
            await asyncio.sleep(0.02)
    finally:
        await connection.close()


def _always(body: bytes) -> Callable[[int], bytes]:
    return lambda _: body


async def _hit_throughput(
    endpoints: dict[str, Endpoint], bodies: dict[str, bytes], cap: int
) -> dict[str, Throughput]:
    totals = {name: Throughput(EXACT, HIGH_CONCURRENCY, 0.0, Series()) for name in endpoints}
    seconds = THROUGHPUT_SECONDS / THROUGHPUT_SLICES
    for index in range(THROUGHPUT_SLICES):
        for name in rotated(list(endpoints), index):
            part = await throughput(
                endpoints[name],
                HIGH_CONCURRENCY,
                _always(bodies[name]),
                EXACT,
                cap // THROUGHPUT_SLICES,
                seconds,
            )
            totals[name].seconds += part.seconds
            merge_series(totals[name].series, part.series)
    return totals


async def compare_apis(
    direct: Endpoint,
    gateway_port: int,
    api_key: str,
    names: Sequence[str],
    requests: int,
    prompts: MissPrompts,
) -> ApiComparison:
    endpoints = {name: api_endpoint(name, gateway_port, api_key) for name in names}
    bodies = {name: APIS[name].body(EXACT_PROMPT) for name in names}
    say(f"per API ({', '.join(names)}): warming up ({API_WARMUP_ROUNDS} rounds)")
    warm_direct, warm_misses = await interleaved_api_misses(
        direct, endpoints, API_WARMUP_ROUNDS, prompts
    )
    check_warm_up("direct upstream", warm_direct)
    for name in names:
        check_warm_up(f"{name} misses", warm_misses[name])
        await prime_exact(endpoints[name], bodies[name])
    for name, series in (await interleaved_api_hits(endpoints, bodies, API_WARMUP_ROUNDS)).items():
        check_warm_up(f"{name} exact hits", series)

    say(f"per API: {requests} rounds of misses (direct, then each API)")
    direct_series, misses = await interleaved_api_misses(direct, endpoints, requests, prompts)
    say(f"per API: {requests} rounds of exact hits")
    hits = await interleaved_api_hits(endpoints, bodies, requests)
    say(f"per API: exact-hit throughput at concurrency {HIGH_CONCURRENCY}")
    rates = await _hit_throughput(endpoints, bodies, requests * THROUGHPUT_REQUESTS_PER_N)
    return ApiComparison(
        direct=direct_series,
        apis={name: ApiSeries(hits[name], misses[name], rates[name]) for name in names},
        concurrency=HIGH_CONCURRENCY,
    )
