"""What retrieving memory before the cache lookups costs exact hits.

    python benchmarks/memory_hits.py --requests 300
    python benchmarks/memory_hits.py --backend redis --memories 200

With `memory.bypass_cache_when_injected` (the default) a request that names a user
retrieves that user's memories before the lookups: a hit is served only if nothing was
injected. This starts the fake upstream and a gateway on loopback (the `gateway bench`
processes), stores one cacheable answer, and measures the same exact hit, interleaved
one by one, for: no user; a user with no memories; a user with `--memories` memories
that retrieval scores but none of which is injected (unrelated to the question). It
prints median and p99 latency per kind and the medians' ratio to "no user".
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import orjson

from gateway_tools.bench.constants import (
    BACKEND_CHOICES,
    CHAT_PATH,
    EMBEDDED,
    EXACT,
    EXACT_PROMPT,
    GATEWAY_START_SECONDS,
    REDIS,
    TENANT_KEY,
    UPSTREAM_START_SECONDS,
    BenchError,
)
from gateway_tools.bench.http_client import Endpoint, HttpConnection, request_head
from gateway_tools.bench.measure import Series, prime, timed_call
from gateway_tools.bench.processes import Server, start_redis, start_servers, stop, storage_config
from gateway_tools.bench.processes import wait_until_ready as wait_ready
from gateway_tools.bench.prompts import chat_body
from gateway_tools.bench.report import percentiles

USER_WITHOUT_MEMORIES = "bench-user-empty"
USER_WITH_MEMORIES = "bench-user-full"
# Statements about other things than the hit prompt (the colours of a rainbow).
_MEMORY_TOPICS = (
    "prefers aisle seats on long flights",
    "keeps a vegetable garden with tomatoes and beans",
    "writes backend services in Go",
    "plays the cello in a community orchestra",
    "is training for a half marathon in spring",
)


@dataclass(frozen=True, slots=True)
class UserEndpoint(Endpoint):
    """The gateway, with `x-gateway-user` set on every request (None: no user)."""

    user: str | None = None

    @property
    def head(self) -> bytes:
        extra = f"x-gateway-user: {self.user}\r\n" if self.user else ""
        return request_head("POST", self.port, CHAT_PATH, self.api_key, extra)


async def _add_memories(port: int, user: str, count: int) -> None:
    connection = HttpConnection("127.0.0.1", port)
    try:
        for index in range(count):
            topic = _MEMORY_TOPICS[index % len(_MEMORY_TOPICS)]
            body = orjson.dumps({"user": user, "content": f"The user {topic} (note {index})."})
            response = await connection.request(
                request_head("POST", port, "/v1/memories", TENANT_KEY), body
            )
            if response.status != 201:
                raise BenchError(f"memory write failed: HTTP {response.status}")
    finally:
        await connection.close()


async def _measure(upstream_port: int, gateway_port: int, requests: int, memories: int) -> int:
    kinds = {
        "no user": UserEndpoint("gateway", gateway_port, TENANT_KEY),
        "user, no memories": UserEndpoint(
            "gateway", gateway_port, TENANT_KEY, USER_WITHOUT_MEMORIES
        ),
        f"user, {memories} memories, none injected": UserEndpoint(
            "gateway", gateway_port, TENANT_KEY, USER_WITH_MEMORIES
        ),
    }
    await _add_memories(gateway_port, USER_WITH_MEMORIES, memories)
    body = chat_body(EXACT_PROMPT)
    await prime(kinds["no user"], body, body, EXACT)
    series = {name: Series() for name in kinds}
    connections = {name: await endpoint.connect() for name, endpoint in kinds.items()}
    try:
        for _ in range(requests):
            for name, endpoint in kinds.items():
                await timed_call(connections[name], endpoint, body, EXACT, series[name])
    finally:
        for connection in connections.values():
            await connection.close()
    base = statistics.median(series["no user"].latencies_ms)
    print(f"{'exact hit':<40} {'p50 ms':>8} {'p99 ms':>8} {'p50 / no user':>14}")
    failed = 0
    for name, result in series.items():
        failed += result.errors + result.wrong_layer
        stats = percentiles(result.latencies_ms)
        p50 = statistics.median(result.latencies_ms)
        print(f"{name:<40} {p50:>8.2f} {float(stats['p99'] or 0):>8.2f} {p50 / base:>14.2f}")
    if failed:
        print(f"{failed} requests failed or were not exact hits", file=sys.stderr)
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=300, help="exact hits per kind")
    parser.add_argument("--memories", type=int, default=50, help="memories of the full user")
    parser.add_argument("--backend", choices=BACKEND_CHOICES[:2], default=EMBEDDED)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gateway-memory-hits-") as tmp:
        workdir = Path(tmp)
        redis = start_redis(workdir) if args.backend == REDIS else None
        servers: tuple[Server, ...] = ()
        try:
            run_dir = workdir / "run"
            run_dir.mkdir()
            redis_url = redis.url if redis is not None else None
            servers = start_servers(run_dir, storage_config(args.backend, run_dir, redis_url))
            upstream, gateway = servers

            async def run() -> int:
                await wait_ready(
                    upstream, "POST", CHAT_PATH, chat_body("probe"), UPSTREAM_START_SECONDS
                )
                await wait_ready(gateway, "GET", "/readyz", b"", GATEWAY_START_SECONDS)
                return await _measure(upstream.port, gateway.port, args.requests, args.memories)

            return asyncio.run(run())
        except BenchError as exc:
            print(f"memory_hits: {exc}", file=sys.stderr)
            return 1
        finally:
            for server in reversed(servers):
                stop(server.process)
            if redis is not None:
                redis.stop()


if __name__ == "__main__":
    raise SystemExit(main())
