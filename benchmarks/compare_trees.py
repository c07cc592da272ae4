"""Two checkouts of the gateway side by side: what a change did, free of machine drift.

    python benchmarks/compare_trees.py OLD_TREE NEW_TREE [--backend embedded|redis]
        [--rounds 6] [--seconds 3] [--concurrency 16] [--bodies 1] [--output results.json]

OLD_TREE and NEW_TREE are checkouts of this repository (for example `git worktree add
--detach ../old HEAD~3`). Each gets its fake upstream and its own `gateway serve`,
started from inside that checkout so that its code runs (on Redis both share one Redis,
each under its own key prefix). After priming, every round runs, on each gateway in
turn (the order swapped every round): a closed-loop phase of `--seconds` of exact hits
at `--concurrency` (one repeated body, or with `--bodies N` N primed questions drawn at
random, as `load.py`'s exact workload with N=100), with the server process's CPU read
from /proc before and after; then 50 sequential exact hits and 50 sequential semantic hits for
their latency. Printed per tree: the median over rounds of CPU ms per exact hit and
req/s, and the p50 of each kind of hit; and the median of the per-round differences.

This machine's speed drifts by up to ~1.5x within minutes, so only such interleaved
comparisons say what a change did; absolute figures are for this run only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from gateway_tools.bench.api_compare import api_endpoint
from gateway_tools.bench.apis import APIS, CHAT
from gateway_tools.bench.constants import (
    EMBEDDED,
    EXACT,
    EXACT_PROMPT,
    GATEWAY_START_SECONDS,
    REDIS,
    SEMANTIC,
    SEMANTIC_PRIME_PROMPT,
    SEMANTIC_PROMPT,
    TENANT_KEY,
    BenchError,
)
from gateway_tools.bench.measure import prime, repeated_hits, throughput
from gateway_tools.bench.processes import (
    Server,
    start_redis,
    start_servers,
    stop,
    storage_config,
    wait_for_servers,
)
from gateway_tools.bench.procstats import cpu_seconds
from gateway_tools.bench.prompts import PromptBank
from gateway_tools.bench.report import say

OLD, NEW = "old", "new"
LATENCY_REQUESTS = 50


@dataclass(slots=True)
class TreeRounds:
    """One tree's measurements, a value per round (latencies: every request)."""

    cpu_ms_per_hit: list[float] = field(default_factory=list)
    hits_per_second: list[float] = field(default_factory=list)
    exact_ms: list[float] = field(default_factory=list)
    semantic_ms: list[float] = field(default_factory=list)


def summarise(old: TreeRounds, new: TreeRounds) -> dict[str, Any]:
    """Medians per tree and the median of the per-round CPU differences (new - old)."""

    def one(tree: TreeRounds) -> dict[str, float]:
        return {
            "cpu_ms_per_exact_hit": round(statistics.median(tree.cpu_ms_per_hit), 3),
            "exact_hits_per_second": round(statistics.median(tree.hits_per_second), 1),
            "exact_hit_p50_ms": round(statistics.median(tree.exact_ms), 3),
            "semantic_hit_p50_ms": round(statistics.median(tree.semantic_ms), 3),
        }

    deltas = [b - a for a, b in zip(old.cpu_ms_per_hit, new.cpu_ms_per_hit, strict=True)]
    return {
        OLD: one(old),
        NEW: one(new),
        "cpu_delta_per_round_median_ms": round(statistics.median(deltas), 3),
    }


async def _measure(
    servers: dict[str, Server], rounds: int, seconds: float, concurrency: int, bodies: int
) -> dict[str, Any]:
    exact = APIS[CHAT].body(EXACT_PROMPT)
    # The phase's bodies: the one exact prompt, or `bodies` primed questions drawn at
    # random (the same draw for both trees: one seeded generator per tree).
    hot = [exact] if bodies == 1 else list(PromptBank.build(7, bodies, 0).hot)
    semantic_prime, semantic = (
        APIS[CHAT].body(SEMANTIC_PRIME_PROMPT),
        APIS[CHAT].body(SEMANTIC_PROMPT),
    )
    endpoints = {
        name: api_endpoint(CHAT, server.port, TENANT_KEY) for name, server in servers.items()
    }
    for name, endpoint in endpoints.items():
        say(f"{name}: priming an exact and a semantic hit")
        await prime(endpoint, exact, exact, EXACT)
        await prime(endpoint, semantic_prime, semantic, SEMANTIC)
        await repeated_hits(endpoint, exact, EXACT, 200)  # the shortcut takes over
        for body in hot if bodies > 1 else []:
            await prime(endpoint, body, body, EXACT)
            await repeated_hits(endpoint, body, EXACT, 2)
    draws = {name: random.Random(11) for name in endpoints}
    trees = {OLD: TreeRounds(), NEW: TreeRounds()}
    for index in range(rounds):
        for name in (OLD, NEW) if index % 2 == 0 else (NEW, OLD):
            endpoint, pid = endpoints[name], servers[name].process.pid
            before = cpu_seconds(pid)
            phase = await throughput(
                endpoint, concurrency, _drawn(hot, draws[name]), EXACT, 10**9, seconds
            )
            used = cpu_seconds(pid) - before
            answered = len(phase.series.latencies_ms)
            hits = await repeated_hits(endpoint, exact, EXACT, LATENCY_REQUESTS)
            paraphrases = await repeated_hits(endpoint, semantic, SEMANTIC, LATENCY_REQUESTS)
            for series in (phase.series, hits, paraphrases):
                if series.errors or series.wrong_layer:
                    raise BenchError(
                        f"{name}: {series.errors} errors, {series.wrong_layer} from another "
                        f"layer ({series.first_error or dict(series.layers)})"
                    )
            tree = trees[name]
            tree.cpu_ms_per_hit.append(1000 * used / max(answered, 1))
            tree.hits_per_second.append(answered / phase.seconds)
            tree.exact_ms += hits.latencies_ms
            tree.semantic_ms += paraphrases.latencies_ms
    return summarise(trees[OLD], trees[NEW])


def _drawn(bodies: list[bytes], draw: random.Random) -> Callable[[int], bytes]:
    """A body drawn at random for each request."""
    return lambda _: bodies[draw.randrange(len(bodies))]


def _start(tree: Path, workdir: Path, backend: str, redis_url: str | None) -> list[Server]:
    """The tree's upstream and gateway, started from inside the tree (its code runs)."""
    workdir.mkdir()
    here = Path.cwd()
    os.chdir(tree)
    try:
        upstream, gateway = start_servers(workdir, storage_config(backend, workdir, redis_url))
    finally:
        os.chdir(here)
    return [upstream, gateway]


def _run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    redis = start_redis(workdir) if args.backend == REDIS else None
    started: list[Server] = []
    try:
        url = None if redis is None else redis.url
        for name, tree in ((OLD, args.old_tree), (NEW, args.new_tree)):
            started += _start(Path(tree).resolve(), workdir / name, args.backend, url)
        for index in range(0, len(started), 2):
            asyncio.run(wait_for_servers(started[index], started[index + 1], GATEWAY_START_SECONDS))
        servers = {OLD: started[1], NEW: started[3]}
        return asyncio.run(
            _measure(servers, args.rounds, args.seconds, args.concurrency, args.bodies)
        )
    finally:
        for server in reversed(started):
            stop(server.process)
        if redis is not None:
            redis.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("old_tree")
    parser.add_argument("new_tree")
    parser.add_argument("--backend", choices=(EMBEDDED, REDIS), default=EMBEDDED)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=3.0, help="per throughput phase")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--bodies", type=int, default=1, help="exact-hit bodies drawn at random (load.py: 100)"
    )
    parser.add_argument("--output", help="also write the results as JSON to this path")
    args = parser.parse_args(argv)
    if args.rounds < 2 or args.seconds <= 0 or args.concurrency < 1 or args.bodies < 1:
        parser.error(
            "--rounds must be at least 2, --seconds positive, --concurrency and --bodies >= 1"
        )
    for tree in (args.old_tree, args.new_tree):
        if not (Path(tree) / "gateway" / "__init__.py").is_file():
            parser.error(f"{tree} is not a checkout of the gateway")
    with tempfile.TemporaryDirectory(prefix="gateway-compare-") as tmp:
        try:
            result = _run(args, Path(tmp))
        except BenchError as exc:
            print(f"compare_trees: {exc}", file=sys.stderr)
            return 1
    result["backend"], result["concurrency"] = args.backend, args.concurrency
    result["bodies"] = args.bodies
    print(f"\n{args.backend}, c={args.concurrency}, {args.bodies} bodies, {args.rounds} rounds")
    print("tree  CPU ms/exact hit  exact hits/s  exact p50 ms  semantic p50 ms")
    for name in (OLD, NEW):
        row = result[name]
        print(
            f"{name:<5} {row['cpu_ms_per_exact_hit']:>16.3f}  {row['exact_hits_per_second']:>12.0f}"
            f"  {row['exact_hit_p50_ms']:>12.3f}  {row['semantic_hit_p50_ms']:>15.3f}"
        )
    delta = result["cpu_delta_per_round_median_ms"]
    print(f"per-round CPU difference (new - old), median: {delta:+.3f} ms")
    if args.output:
        Path(args.output).write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
