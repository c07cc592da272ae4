"""The driver: one measured run per storage backend, and `run_benchmark`."""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from gateway.testing.redis_server import RedisServer
from gateway_tools.bench.api_compare import compare_apis
from gateway_tools.bench.apis import API_NAMES, APIS
from gateway_tools.bench.constants import (
    BACKEND_CHOICES,
    BACKENDS,
    BOTH,
    EMBEDDED,
    EXACT,
    EXACT_PROMPT,
    FIRST_SEEN_SETTLE_SECONDS,
    GATEWAY_START_SECONDS,
    HIGH_CONCURRENCY,
    HOST,
    MISS,
    REDIS,
    REDIS_TIMEOUT_SECONDS,
    REQUEST_TIMEOUT_SECONDS,
    SEMANTIC,
    SEMANTIC_PRIME_PROMPT,
    SEMANTIC_PROMPT,
    TENANT_KEY,
    THROUGHPUT_REQUESTS_PER_N,
    UPSTREAM_KEY,
    WARMUP_REQUESTS,
    BenchError,
)
from gateway_tools.bench.http_client import REQUEST_FAILURES, Endpoint, HttpConnection, request_head
from gateway_tools.bench.measure import (
    Throughput,
    check_warm_up,
    first_seen_hits,
    interleaved_misses,
    prime,
    repeated_hits,
    throughput,
)
from gateway_tools.bench.processes import (
    Server,
    start_redis,
    start_servers,
    stop,
    storage_config,
    wait_for_servers,
)
from gateway_tools.bench.prompts import MissPrompts, chat_body, first_seen_paraphrases
from gateway_tools.bench.report import say
from gateway_tools.bench.report.apis import api_failures, build_api_section
from gateway_tools.bench.report.bench import THROUGHPUT_KINDS, build_report, finish


async def storage_state(server: Server) -> dict[str, Any]:
    """The gateway's storage as `/readyz` reports it (`available`, and for Redis
    `failures_total` and `last_error`)."""
    connection = HttpConnection(HOST, server.port)
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
            response = await connection.request(
                request_head("GET", server.port, "/readyz", TENANT_KEY), b""
            )
    except REQUEST_FAILURES as exc:
        raise BenchError(f"{server.name}: /readyz failed: {exc!r}") from exc
    finally:
        await connection.close()
    try:
        storage = orjson.loads(response.body)["storage"]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise BenchError(
            f"{server.name}: unexpected /readyz answer {response.body[:200]!r}"
        ) from exc
    if not isinstance(storage, dict):
        raise BenchError(f"{server.name}: unexpected /readyz answer {response.body[:200]!r}")
    return storage


def _storage_summary(
    backend: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> dict[str, Any]:
    failures: int | None = None
    if "failures_total" in after:
        failures = int(after["failures_total"]) - int(before.get("failures_total", 0))
    summary: dict[str, Any] = {
        "backend": backend,
        "available": bool(after.get("available")),
        # Redis operations that failed during the run (timeouts, refused connections);
        # the embedded backend does not count them.
        "failures": failures,
        "last_error": after.get("last_error"),
    }
    if backend == REDIS:
        summary["redis_timeout_seconds"] = REDIS_TIMEOUT_SECONDS
    return summary


async def measure(
    upstream: Server,
    gateway_server: Server,
    requests: int,
    seed: int,
    backend: str = EMBEDDED,
    apis: Sequence[str] = API_NAMES,
) -> dict[str, Any]:
    await wait_for_servers(upstream, gateway_server, GATEWAY_START_SECONDS)
    storage_before = await storage_state(gateway_server)
    if storage_before.get("backend") != backend or not storage_before.get("available"):
        raise BenchError(
            f"the gateway's storage is not a usable {backend} backend: {storage_before}"
        )

    direct = Endpoint("upstream", upstream.port, UPSTREAM_KEY)
    gateway = Endpoint("gateway", gateway_server.port, TENANT_KEY)
    prompts = MissPrompts(random.Random(seed))
    hit_body = chat_body(EXACT_PROMPT)
    semantic_prime = chat_body(SEMANTIC_PRIME_PROMPT)
    semantic_body = chat_body(SEMANTIC_PROMPT)

    say(f"warming up ({WARMUP_REQUESTS} requests per path; miss prompts from seed {seed})")
    warm_direct, warm_miss = await interleaved_misses(direct, gateway, WARMUP_REQUESTS, prompts)
    check_warm_up("direct upstream", warm_direct)
    check_warm_up("misses", warm_miss)
    await prime(gateway, hit_body, hit_body, EXACT)
    check_warm_up("exact hits", await repeated_hits(gateway, hit_body, EXACT, WARMUP_REQUESTS))
    await prime(gateway, semantic_prime, semantic_body, SEMANTIC)
    check_warm_up(
        "semantic hits", await repeated_hits(gateway, semantic_body, SEMANTIC, WARMUP_REQUESTS)
    )

    say(f"latency: {requests} interleaved direct/gateway misses")
    direct_series, miss_series = await interleaved_misses(direct, gateway, requests, prompts)
    say(f"latency: {requests} exact hits, {requests} semantic hits")
    hit_series = await repeated_hits(gateway, hit_body, EXACT, requests)
    semantic_series = await repeated_hits(gateway, semantic_body, SEMANTIC, requests)
    pairs = first_seen_paraphrases(
        seed, requests, exclude=frozenset({SEMANTIC_PRIME_PROMPT, EXACT_PROMPT})
    )
    say(f"latency: {len(pairs)} semantic hits on paraphrases never sent before")
    first_seen_series = await first_seen_hits(gateway, pairs, FIRST_SEEN_SETTLE_SECONDS)

    bodies: dict[str, Callable[[int], bytes]] = {
        EXACT: lambda _: hit_body,
        SEMANTIC: lambda _: semantic_body,
        MISS: prompts.body,  # a new prompt for every request
    }
    rates: dict[str, Throughput] = {}
    cap = requests * THROUGHPUT_REQUESTS_PER_N
    for concurrency in (1, HIGH_CONCURRENCY):
        say(f"throughput at concurrency {concurrency}")
        for prefix, layer, _ in THROUGHPUT_KINDS:
            rates[f"{prefix}_c{concurrency}"] = await throughput(
                gateway, concurrency, bodies[layer], layer, cap
            )
    report = build_report(
        requests, direct_series, miss_series, hit_series, semantic_series, rates, first_seen_series
    )
    if apis:
        comparison = await compare_apis(
            direct, gateway_server.port, TENANT_KEY, apis, requests, prompts
        )
        report["apis"] = build_api_section(comparison)
        if api_failures(report["apis"]):
            report["ok"] = False
    report["miss_prompts"] = {"seed": seed, "issued": prompts.issued}
    storage = _storage_summary(backend, storage_before, await storage_state(gateway_server))
    report["storage"] = storage
    if storage["failures"] or not storage["available"]:
        report["ok"] = False
    return report


def _run_backend(
    workdir: Path,
    backend: str,
    redis_url: str | None,
    requests: int,
    seed: int,
    apis: Sequence[str],
    policy: Path | None = None,
) -> dict[str, Any]:
    """One whole run against a gateway on `backend`, in its own directory and processes."""
    workdir.mkdir()
    servers: tuple[Server, ...] = ()
    try:
        servers = start_servers(workdir, storage_config(backend, workdir, redis_url), policy)
        report = asyncio.run(measure(*servers, requests, seed, backend, apis))
    finally:
        # The gateway first: it holds connections to the upstream.
        for server in reversed(servers):
            stop(server.process)
    return {"backend": backend, **report}


def run_benchmark(
    requests: int,
    output: str | None,
    seed: int | None = None,
    backend: str = EMBEDDED,
    apis: Sequence[str] = API_NAMES,
    policy: Path | None = None,
) -> int:
    """Run the whole benchmark; 0 if every request succeeded and came from its layer.

    `backend`: `embedded`, `redis` or `both` (each in turn, shown side by side). `seed`
    picks the miss prompts; by default a new one per run (it is in the report), the same
    for every backend of the run. `apis`: the APIs (`apis.API_NAMES`) whose exact hits,
    misses and hit throughput are then measured side by side (empty: none). `policy`: a
    policy file the gateway runs under (e.g. with rate limits; default: the built-in one).
    """
    unknown = [name for name in apis if name not in APIS]
    if unknown:
        print(f"gateway bench: unknown APIs {unknown}; choose from {API_NAMES}", file=sys.stderr)
        return 2
    if requests < 2:
        print("gateway bench: --requests must be at least 2", file=sys.stderr)
        return 2
    if backend not in BACKEND_CHOICES:
        print(
            f"gateway bench: --backend must be one of {', '.join(BACKEND_CHOICES)}",
            file=sys.stderr,
        )
        return 2
    names = BACKENDS if backend == BOTH else (backend,)
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    reports: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="gateway-bench-") as tmp:
        workdir = Path(tmp)
        redis: RedisServer | None = None
        try:
            if REDIS in names:
                redis = start_redis(workdir)
            for name in names:
                say(f"--- storage backend: {name}")
                url = redis.url if redis is not None else None
                reports[name] = _run_backend(
                    workdir / name, name, url, requests, seed, apis, policy
                )
        except BenchError as exc:
            print(f"gateway bench: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("gateway bench: interrupted", file=sys.stderr)
            return 130
        finally:
            if redis is not None:
                redis.stop()
    return finish(reports, output)
