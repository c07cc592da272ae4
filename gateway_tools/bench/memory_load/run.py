"""The driver of `benchmarks/memory_load.py`: per backend, a fresh fake upstream and
`gateway serve` (Redis: a fresh Redis 8 from the test harness's runner), the stores
filled through the APIs, then the miss and exact-hit phases; the backends one after
the other, never at the same time."""

from __future__ import annotations

import asyncio
import random
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway_tools.bench.constants import (
    BACKENDS,
    BOTH,
    EXACT,
    EXACT_PROMPT,
    GATEWAY_START_SECONDS,
    REDIS,
    BenchError,
)
from gateway_tools.bench.http_client import REQUEST_FAILURES, Endpoint
from gateway_tools.bench.measure import prime
from gateway_tools.bench.memory_load import fill
from gateway_tools.bench.memory_load.phases import Client, interleaved, is_exact_hit, is_forwarded
from gateway_tools.bench.memory_load.report import failures, render, summarise, with_differences
from gateway_tools.bench.memory_load.scenario import (
    FULL_USER,
    KNOWLEDGE_TENANT,
    NEITHER_KIND,
    TENANTS,
    auth_section,
    hit_kinds,
    miss_kinds,
)
from gateway_tools.bench.processes import (
    Server,
    log_tail,
    start_redis,
    start_servers,
    stop,
    storage_config,
    wait_for_servers,
)
from gateway_tools.bench.prompts import MissPrompts, chat_body
from gateway_tools.bench.report.common import machine, say, write_json

TAG = "memory_load"
WARMUP_ROUNDS = 5  # per kind, not reported: first scope loads, connection set-up


@dataclass(frozen=True, slots=True)
class Setup:
    knowledge_items: int
    memories: int
    requests: int
    seed: int


async def _fill(port: int, setup: Setup) -> dict[str, float]:
    rng = random.Random(setup.seed)
    seconds = {
        "knowledge": await fill.add_knowledge(port, KNOWLEDGE_TENANT, setup.knowledge_items, rng)
    }
    for tenant in TENANTS:
        seconds[f"memories {tenant.name}"] = await fill.add_memories(
            port, tenant, FULL_USER, setup.memories, rng
        )
    return {name: round(value, 2) for name, value in seconds.items()}


async def _measure(port: int, setup: Setup) -> dict[str, Any]:
    prompts = MissPrompts(random.Random(setup.seed + 1))
    client = Client(port, secrets.token_hex(3))
    try:
        kinds = miss_kinds()
        await interleaved(client, kinds, WARMUP_ROUNDS, lambda _k: prompts.body(), is_forwarded)
        say(f"{len(kinds)} miss kinds x {setup.requests} requests", TAG)
        misses = await interleaved(
            client, kinds, setup.requests, lambda _k: prompts.body(), is_forwarded
        )
        body = chat_body(EXACT_PROMPT)
        for tenant in TENANTS:
            await prime(Endpoint("gateway", port, tenant.api_key), body, body, EXACT)
        hits = await interleaved(client, hit_kinds(), setup.requests, lambda _k: body, is_exact_hit)
    finally:
        await client.close()
    miss_summaries = {name: summarise(series) for name, series in misses.items()}
    with_differences(miss_summaries, NEITHER_KIND)
    return {
        "misses": miss_summaries,
        "hits": {name: summarise(series) for name, series in hits.items()},
    }


def _run_backend(backend: str, setup: Setup) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="gateway-memory-load-") as tmp:
        workdir = Path(tmp)
        redis = start_redis(workdir) if backend == REDIS else None
        servers: tuple[Server, ...] = ()
        try:
            run_dir = workdir / "run"
            run_dir.mkdir()
            storage = storage_config(backend, run_dir, redis.url if redis else None)
            servers = start_servers(run_dir, storage, auth=auth_section())
            upstream, gateway = servers[0], servers[1]

            async def run() -> dict[str, Any]:
                await wait_for_servers(upstream, gateway, GATEWAY_START_SECONDS)
                try:
                    fill_seconds = await _fill(gateway.port, setup)
                    result = await _measure(gateway.port, setup)
                except REQUEST_FAILURES as exc:
                    raise BenchError(
                        f"the gateway stopped answering ({type(exc).__name__}: {exc}; "
                        f"exit status {gateway.process.poll()}); "
                        f"its log ends:\n{log_tail(gateway.log_path)}"
                    ) from exc
                return {"fill_seconds": fill_seconds, **result}

            say(f"backend {backend}", TAG)
            return asyncio.run(run())
        finally:
            for server in reversed(servers):
                stop(server.process)
            if redis is not None:
                redis.stop()


def run_memory_load(backend: str, setup: Setup, output: str | None) -> int:
    """Measure, print the table, write `output`; 1 when a request failed or took
    another path than its phase's (the numbers would then describe something else)."""
    backends = BACKENDS if backend == BOTH else (backend,)
    try:
        results = {name: _run_backend(name, setup) for name in backends}
    except BenchError as exc:
        say(f"failed: {exc}", TAG)
        return 1
    report: dict[str, Any] = {
        "machine": machine(),
        "setup": {
            "knowledge_items": setup.knowledge_items,
            "memories": setup.memories,
            "requests": setup.requests,
            "seed": setup.seed,
        },
        "backends": results,
    }
    print(render(report))
    problems = failures(report)
    report["failures"] = problems
    if output:
        write_json(output, report, TAG)
    for line in problems:
        say(line, TAG)
    return 1 if problems else 0
