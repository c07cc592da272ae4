"""What the rate-limit check adds to an exact hit: two gateways side by side, one limited.

    python benchmarks/rate_limit_overhead.py [--backend both] [--rounds 20] [--requests 50]
        [--apis chat,messages] [--output results.json]

Per storage backend, starts the fake upstream and two `gateway serve` processes with
`gateway bench`'s config: one under the built-in default policy (no limits), one under a
policy with tenant and key limits (`rpm` and `tpm`) far above what the benchmark sends,
so that every request is checked and none is refused. On Redis both share one Redis
(each under its own key prefix), so the limited one makes its script call over the
same loopback as its cache reads.

Each API's exact body is primed on both, then measured in rounds: `--requests`
sequential exact hits on one gateway, then as many on the other, the order swapped
every round, so that drift of this shared machine falls on both alike. Reported per
backend and API: the p50 of each over all rounds, the added p50 (limited minus plain),
and the median and range of the per-round differences. `chat` is the path a repeated
hit takes (the exact-hit shortcut: the check overlaps the read); `messages` (Anthropic)
goes through the full pipeline, where the request-limit check comes before the read.

Exits 1 if any request failed or was not an exact hit, or if the limited Redis gateway
wrote no rate-limit bucket (its limits were not in force).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import redis
import yaml

from gateway_tools.bench.api_compare import api_endpoint
from gateway_tools.bench.apis import APIS, CHAT, MESSAGES, parse_apis
from gateway_tools.bench.constants import (
    BACKEND_CHOICES,
    BACKENDS,
    BOTH,
    EXACT,
    EXACT_PROMPT,
    GATEWAY_START_SECONDS,
    REDIS,
    TENANT_KEY,
    BenchError,
)
from gateway_tools.bench.http_client import Endpoint
from gateway_tools.bench.measure import Series, prime, repeated_hits
from gateway_tools.bench.processes import (
    Server,
    start_redis,
    start_servers,
    stop,
    storage_config,
    wait_for_servers,
)
from gateway_tools.bench.report import say

# Far above anything the benchmark sends: every request is checked, none is refused.
HIGH_RPM = 100_000_000
HIGH_TPM = 10_000_000_000
LIMITS_POLICY: dict[str, Any] = {
    "rate_limits": {
        "tenant": {"rpm": HIGH_RPM, "tpm": HIGH_TPM},
        "key": {"rpm": HIGH_RPM, "tpm": HIGH_TPM},
    }
}
PLAIN, LIMITED = "plain", "limited"
BAR_MS = 0.3  # issue 20: "rate-limit checks add under 0.3 ms p50 to an exact hit"


@dataclass(slots=True)
class Pair:
    """One API's measurements on the two gateways of one backend."""

    api: str
    latencies_ms: dict[str, list[float]] = field(default_factory=lambda: {PLAIN: [], LIMITED: []})
    round_deltas_ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def add_round(self, series: dict[str, Series]) -> None:
        for name, one in series.items():
            self.latencies_ms[name].extend(one.latencies_ms)
            if one.errors or one.wrong_layer:
                self.failures.append(
                    f"{name} {self.api}: {one.errors} errors, {one.wrong_layer} not exact "
                    f"({one.first_error or dict(one.layers)})"
                )
        if series[PLAIN].latencies_ms and series[LIMITED].latencies_ms:
            self.round_deltas_ms.append(
                statistics.median(series[LIMITED].latencies_ms)
                - statistics.median(series[PLAIN].latencies_ms)
            )

    def summary(self) -> dict[str, Any]:
        plain = statistics.median(self.latencies_ms[PLAIN])
        limited = statistics.median(self.latencies_ms[LIMITED])
        deltas = sorted(self.round_deltas_ms)
        return {
            "api": self.api,
            "requests_per_gateway": len(self.latencies_ms[PLAIN]),
            "plain_p50_ms": round(plain, 3),
            "limited_p50_ms": round(limited, 3),
            "added_p50_ms": round(limited - plain, 3),
            "round_delta_median_ms": round(statistics.median(deltas), 3),
            "round_delta_range_ms": [round(deltas[0], 3), round(deltas[-1], 3)],
            "rounds": len(deltas),
            "under_bar": limited - plain < BAR_MS,
        }


async def _measure(
    servers: dict[str, Server], apis: Sequence[str], rounds: int, requests: int
) -> list[Pair]:
    endpoints: dict[str, dict[str, Endpoint]] = {
        name: {api: api_endpoint(api, server.port, TENANT_KEY) for api in apis}
        for name, server in servers.items()
    }
    bodies = {api: APIS[api].body(EXACT_PROMPT) for api in apis}
    for name in servers:
        for api in apis:
            say(f"{name}: priming the {api} exact hit")
            await prime(endpoints[name][api], bodies[api], bodies[api], EXACT)
            # Warm both paths (the first hit of a body takes the full path).
            await repeated_hits(endpoints[name][api], bodies[api], EXACT, requests)
    pairs = [Pair(api) for api in apis]
    for index in range(rounds):
        order = (PLAIN, LIMITED) if index % 2 == 0 else (LIMITED, PLAIN)
        for pair in pairs:
            series = {
                name: await repeated_hits(
                    endpoints[name][pair.api], bodies[pair.api], EXACT, requests
                )
                for name in order
            }
            pair.add_round(series)
    return pairs


def _bucket_keys(redis_url: str, prefix: str) -> int:
    client = redis.Redis.from_url(redis_url)
    try:
        return sum(1 for _ in client.scan_iter(match=f"{prefix}:ratelimit:*", count=1000))
    finally:
        client.close()


def _run_backend(
    workdir: Path,
    backend: str,
    redis_url: str | None,
    apis: Sequence[str],
    rounds: int,
    requests: int,
) -> dict[str, Any]:
    workdir.mkdir()
    policy_path = workdir / "limits.yaml"
    policy_path.write_text(yaml.safe_dump(LIMITS_POLICY, sort_keys=False))
    started: list[Server] = []
    gateways: dict[str, Server] = {}
    storages: dict[str, dict[str, Any]] = {}
    try:
        for name, policy in ((PLAIN, None), (LIMITED, policy_path)):
            (workdir / name).mkdir()
            storages[name] = storage_config(backend, workdir / name, redis_url)
            upstream, gateway = start_servers(workdir / name, storages[name], policy)
            started += [upstream, gateway]
            gateways[name] = gateway
        for index in range(0, len(started), 2):
            asyncio.run(wait_for_servers(started[index], started[index + 1], GATEWAY_START_SECONDS))
        pairs = asyncio.run(_measure(gateways, apis, rounds, requests))
        # At once: a bucket's key expires a second after it is full again.
        bucket_keys = None
        if redis_url is not None:
            bucket_keys = _bucket_keys(redis_url, storages[LIMITED]["redis_prefix"])
    finally:
        for server in reversed(started):
            stop(server.process)
    report: dict[str, Any] = {
        "backend": backend,
        "apis": [pair.summary() for pair in pairs],
        "failures": [failure for pair in pairs for failure in pair.failures],
    }
    if bucket_keys is not None:
        report["limited_bucket_keys"] = bucket_keys
    return report


def _print(reports: list[dict[str, Any]]) -> None:
    print(
        "\nbackend   api       plain p50  limited p50  added p50  per-round median [range]"
        f"  under {BAR_MS} ms"
    )
    for report in reports:
        for row in report["apis"]:
            low, high = row["round_delta_range_ms"]
            print(
                f"{report['backend']:<9} {row['api']:<9} {row['plain_p50_ms']:>8.3f}  "
                f"{row['limited_p50_ms']:>10.3f}  {row['added_p50_ms']:>+9.3f}  "
                f"{row['round_delta_median_ms']:>+8.3f} [{low:+.3f}, {high:+.3f}]"
                f"  {'yes' if row['under_bar'] else 'NO'}"
            )
        for failure in report["failures"]:
            print(f"  failure: {failure}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default=BOTH)
    parser.add_argument("--rounds", type=int, default=20, help="alternating rounds")
    parser.add_argument("--requests", type=int, default=50, help="hits per gateway per round")
    parser.add_argument("--apis", type=parse_apis, default=(CHAT, MESSAGES))
    parser.add_argument("--output", help="also write the results as JSON to this path")
    args = parser.parse_args(argv)
    if args.rounds < 2 or args.requests < 1:
        parser.error("--rounds must be at least 2 and --requests at least 1")
    names = BACKENDS if args.backend == BOTH else (args.backend,)
    reports: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="gateway-ratelimit-") as tmp:
        workdir = Path(tmp)
        redis_server = start_redis(workdir) if REDIS in names else None
        try:
            for backend in names:
                say(f"--- storage backend: {backend}")
                url = redis_server.url if redis_server is not None and backend == REDIS else None
                reports.append(
                    _run_backend(
                        workdir / backend, backend, url, args.apis, args.rounds, args.requests
                    )
                )
        except BenchError as exc:
            print(f"rate_limit_overhead: {exc}", file=sys.stderr)
            return 1
        finally:
            if redis_server is not None:
                redis_server.stop()
    _print(reports)
    if args.output:
        Path(args.output).write_bytes(orjson.dumps(reports, option=orjson.OPT_INDENT_2))
    failed = any(report["failures"] for report in reports) or any(
        report.get("limited_bucket_keys") == 0 for report in reports
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
