"""Noisy neighbour: one tenant's latency while another floods the gateway with big bodies.

    python benchmarks/noisy_neighbour.py [--rounds 3] [--duration-seconds 10] [--flood noisy|large]

Starts the fake upstream and `gateway serve` (embedded backend, two tenants) on
loopback. Tenant B sends cheap requests (exact-cache hits of primed questions), one at a
time with a pause between them, with nothing else running (idle), and while tenant A
sends a 3 MB body every `1 / --flood-rate` seconds, each on a connection of its own,
without waiting for the previous one (flood); the two phases alternate for `--rounds`
rounds. Prints B's p50 / p99 / max latency in both, the ratio of the p99s, and what A's
requests got back.

`--flood noisy` (default): the body of the issue, 60,000 small messages (refused with a
400 by the default `server.max_messages`); `--flood large`: one message of 3 MB of text,
which the gateway accepts and forwards (parsed and validated in a worker thread).
Everything runs on loopback, in bounded loops; nothing is sent anywhere else.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson
import yaml

from gateway.testing.threaded_server import free_port
from gateway_tools.bench.constants import CHAT_PATH, HOST, MODEL, TENANT_KEY
from gateway_tools.bench.http_client import HttpConnection, request_head
from gateway_tools.bench.processes import (
    Server,
    spawn,
    stop,
    storage_config,
    wait_until_ready,
    write_config,
)

NOISY_KEY = "sk-bench-noisy"
QUESTIONS = 20
B_PAUSE_SECONDS = 0.05  # ~20 requests per second from B
READY_TIMEOUT_SECONDS = 180.0


def _chat_body(content: str) -> bytes:
    return orjson.dumps({"model": MODEL, "messages": [{"role": "user", "content": content}]})


def flood_body(kind: str) -> bytes:
    if kind == "noisy":
        messages = [{"role": "user", "content": f"message {i} xxxxxxx"} for i in range(60_000)]
        return orjson.dumps({"model": MODEL, "messages": messages})
    words = "the quick brown fox jumps over the lazy dog " * 70_000
    return _chat_body(f"Summarise this text: {words}")


def start_servers(workdir: Path) -> tuple[Server, Server]:
    """The fake upstream and `gateway serve` with `gateway bench`'s config plus tenant A."""
    upstream_port, gateway_port = free_port(), free_port()
    while gateway_port == upstream_port:
        gateway_port = free_port()
    config_path = write_config(workdir, upstream_port, storage_config("embedded", workdir, None))
    config = yaml.safe_load(config_path.read_text())
    config["auth"]["tenants"].append({"name": "noisy", "api_keys": [NOISY_KEY]})
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    upstream_log, gateway_log = workdir / "upstream.log", workdir / "gateway.log"
    upstream = Server(
        "fake upstream",
        spawn(["-m", "gateway.testing.fake_upstream", "--port", str(upstream_port)], upstream_log),
        upstream_port,
        upstream_log,
    )
    command = ["-m", "gateway", "serve", "--config", str(config_path), "--port", str(gateway_port)]
    return upstream, Server("gateway", spawn(command, gateway_log), gateway_port, gateway_log)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def measure_b(
    port: int, bodies: list[bytes], duration_seconds: float, *, priming: bool = False
) -> list[float]:
    """B's latencies in ms: sequential requests on one keep-alive connection; each must
    be an exact hit (unless `priming`: then the first of each question is a miss)."""
    head = request_head("POST", port, CHAT_PATH, TENANT_KEY)
    connection = await HttpConnection(HOST, port).open()
    latencies: list[float] = []
    deadline = time.monotonic() + duration_seconds
    try:
        while time.monotonic() < deadline:
            body = bodies[len(latencies) % len(bodies)]
            started = time.perf_counter()
            response = await connection.request(head, body)
            latencies.append((time.perf_counter() - started) * 1000)
            layer = response.headers.get("x-gateway-cache")
            if response.status != 200 or (layer != "exact" and not priming):
                raise SystemExit(f"B got {response.status} / {layer}: not an exact hit")
            await asyncio.sleep(B_PAUSE_SECONDS)
    finally:
        await connection.close()
    return latencies


async def flood_a(port: int, body: bytes, rate: float, stop_at: float) -> Counter[str]:
    """A's bodies, one every 1/rate s, each on a new connection, not waiting for the last."""
    head = request_head("POST", port, CHAT_PATH, NOISY_KEY)
    outcomes: Counter[str] = Counter()

    async def one() -> None:
        connection = HttpConnection(HOST, port)
        try:
            response = await connection.request(head, body)
            outcomes[str(response.status)] += 1
        except Exception as exc:  # counted, not fatal: the report shows it
            outcomes[type(exc).__name__] += 1
        finally:
            await connection.close()

    tasks: list[asyncio.Task[None]] = []
    while time.monotonic() < stop_at:
        tasks.append(asyncio.create_task(one()))
        await asyncio.sleep(1.0 / rate)
    await asyncio.gather(*tasks)
    return outcomes


def summary(latencies: list[float]) -> dict[str, float]:
    return {
        "requests": len(latencies),
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "max_ms": round(max(latencies), 2),
    }


async def run(gateway: Server, args: argparse.Namespace) -> dict[str, object]:
    bodies = [_chat_body(f"Name a famous landmark, question {i}.") for i in range(QUESTIONS)]
    await wait_until_ready(gateway, "POST", CHAT_PATH, bodies[0], READY_TIMEOUT_SECONDS)
    await measure_b(gateway.port, bodies, 3.0, priming=True)  # primes every question
    flood = flood_body(args.flood)
    idle: list[float] = []
    busy: list[float] = []
    outcomes: Counter[str] = Counter()
    # Idle and flooded phases alternate, so that the machine's drift (other work on it)
    # weighs on both alike.
    for round_number in range(1, args.rounds + 1):
        print(f"round {round_number}/{args.rounds}: B idle ...", file=sys.stderr)
        idle += await measure_b(gateway.port, bodies, args.duration_seconds)
        print(
            f"round {round_number}/{args.rounds}: B while A floods ({args.flood}, "
            f"{args.flood_rate:g} req/s) ...",
            file=sys.stderr,
        )
        stop_at = time.monotonic() + args.duration_seconds
        flooding = asyncio.create_task(flood_a(gateway.port, flood, args.flood_rate, stop_at))
        busy += await measure_b(gateway.port, bodies, args.duration_seconds)
        outcomes += await flooding
    idle_summary, busy_summary = summary(idle), summary(busy)
    return {
        "flood": args.flood,
        "flood_body_bytes": len(flood),
        "flood_rate_per_second": args.flood_rate,
        "rounds": args.rounds,
        "seconds_per_phase": args.duration_seconds,
        "a_outcomes": dict(outcomes),
        "b_idle": idle_summary,
        "b_while_flooded": busy_summary,
        "p99_ratio": round(busy_summary["p99_ms"] / idle_summary["p99_ms"], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration-seconds", type=float, default=10.0, help="per phase and round")
    parser.add_argument("--rounds", type=int, default=3, help="idle + flooded phase pairs")
    parser.add_argument("--flood", choices=("noisy", "large"), default="noisy")
    parser.add_argument("--flood-rate", type=float, default=1.0, help="A's bodies per second")
    parser.add_argument("--output", help="also write the results as JSON to this path")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="noisy-neighbour-") as folder:
        workdir = Path(folder)
        upstream, gateway = start_servers(workdir)
        try:
            results = asyncio.run(run(gateway, args))
        finally:
            stop(gateway.process)
            stop(upstream.process)
    idle, busy = results["b_idle"], results["b_while_flooded"]
    print(
        f"flood: {results['flood']} ({results['flood_body_bytes']:,} bytes) "
        f"at {results['flood_rate_per_second']} req/s; A got {results['a_outcomes']}"
    )
    print("| tenant B (exact hits) | requests | p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|")
    for name, row in (("idle", idle), ("while A floods", busy)):
        assert isinstance(row, dict)
        print(
            f"| {name} | {row['requests']} | {row['p50_ms']} | {row['p99_ms']} | {row['max_ms']} |"
        )
    print(f"p99 while flooded / idle: {results['p99_ratio']}x")
    if args.output:
        Path(args.output).write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
