"""Load benchmark: the gateway vs the upstream called directly vs the LiteLLM proxy.

    python benchmarks/load.py [--duration 10] [--rounds 3] [--output load.json]
        [--markdown-out block.md]
    python benchmarks/load.py --render-readme load.json [--readme docs/benchmarks.md]

One run on this machine, every server a separate process on loopback:

- `upstream`: the fake upstream called directly (no cache, the floor);
- `gateway-embedded` and `gateway-redis`: `gateway serve` on each storage backend;
- `litellm-proxy`: `litellm --config proxy.yaml` with its in-memory cache
  (`cache_params: {type: local}`), a master key and no database.

Three workloads (see `gateway_tools.bench.prompts`): `exact` (every request repeats one of 100
primed questions), `miss` (every request is new) and `mix` (60 % repeats, 20 %
paraphrases of primed questions, 20 % new). Each at concurrency 1, 16 and 64 for
`--duration` seconds (closed loop: every worker sends its next request when the last one
is answered), after `--warmup` seconds that are not counted. Within each (workload,
concurrency) the targets run back to back, their order rotated from one to the next, so
that drift of the machine does not always favour the same target. Before each phase the
100 repeated questions are primed again (LiteLLM's cache evicts them, see
`gateway_tools.bench.targets`).

Per phase: req/s, p50/p99 latency, errors, answers from an unexpected cache layer (the
gateway's `x-gateway-cache`, the proxy's `x-litellm-cache-key`), the share of cache hits,
and from /proc: CPU seconds of the server, of its fake upstream and (gateway-redis) of
Redis, and the server's peak RSS during the phase. Prints one report at the end
(progress goes to stderr): per workload, concurrency and target, req/s and p50/p99
against the LiteLLM proxy and against the upstream floor, CPU per request of the server
and (separately) of its upstream and Redis, and the verdicts against the targets of
issue 21 (`gateway_tools.bench.report.load_verdicts`). With --output the same as JSON;
with --markdown-out the README's block. Exits 1 if any request failed or was answered
from an unexpected layer (not for a target missed: the verdicts say that).

--render-readme reads such a JSON and replaces the README's block between
`<!-- load-benchmark:start -->` and `<!-- load-benchmark:end -->` (nothing is measured).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from gateway.testing.redis_server import RedisServer
from gateway_tools.bench.constants import (
    CHAT_PATH,
    CLIENT_NAME,
    REDIS,
    UPSTREAM_START_SECONDS,
    BenchError,
)
from gateway_tools.bench.phases import PhaseStats, closed_loop, prime
from gateway_tools.bench.processes import Server, start_redis, stop, wait_until_ready
from gateway_tools.bench.procstats import MIB, ProcessProbe, child_pid_with, machine_busy_seconds
from gateway_tools.bench.prompts import (
    REPEAT,
    WORKLOADS,
    Cursors,
    PromptBank,
    Workload,
    chat_body,
    request_source,
)
from gateway_tools.bench.report import machine, say, write_json
from gateway_tools.bench.report.load import Usage, combine_rounds, phase_row
from gateway_tools.bench.report.load_render import (
    DEFAULT_CONCURRENCY,
    DEFAULT_WARMUP_SECONDS,
    DEFAULT_WORKLOADS,
    derive,
    notes,
    readme_block,
    regenerate_readme,
    render,
    store_failures,
)
from gateway_tools.bench.report.readme_block import MarkersError
from gateway_tools.bench.runner import storage_state
from gateway_tools.bench.targets import (
    GATEWAY,
    LITELLM,
    READINESS,
    TARGET_NAMES,
    UPSTREAM,
    Target,
    start_gateway,
    start_litellm,
    start_upstream,
)

# The gateways and the proxy start at the same time on few cores: each loads its models
# (gateway: spaCy, the sentence encoder; proxy: litellm) while the others do.
START_SECONDS = 180.0
FRESH_PROMPTS = 30_000  # new prompts per run (per target); MissPrompts holds ~34,000
# The block lives on the benchmarks page of the docs.
README = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


@dataclass(slots=True)
class Deployment:
    """Every process of the run, and how to measure each target."""

    targets: list[Target] = field(default_factory=list)
    servers: list[Server] = field(default_factory=list)  # in start order
    redis: RedisServer | None = None
    probes: dict[str, dict[str, ProcessProbe]] = field(default_factory=dict)

    def stop(self) -> None:
        # Servers that forward first: they hold connections to their upstreams.
        for server in reversed(self.servers):
            stop(server.process)
        if self.redis is not None:
            self.redis.stop()


def _start_target(name: str, workdir: Path, deployment: Deployment, ports: set[int]) -> None:
    upstream = start_upstream(workdir, f"upstream-for-{name}", ports)
    deployment.servers.append(upstream)
    if name == UPSTREAM:
        deployment.targets.append(Target(name, UPSTREAM, upstream, None))
        return
    if name == "litellm-proxy":
        server = start_litellm(workdir, upstream, ports)
        deployment.servers.append(server)
        deployment.targets.append(Target(name, LITELLM, server, upstream))
        return
    backend = name.removeprefix("gateway-")
    redis_url = None
    if backend == REDIS:
        deployment.redis = start_redis(workdir)
        redis_url = deployment.redis.url
    server = start_gateway(workdir, backend, upstream, redis_url, ports)
    deployment.servers.append(server)
    deployment.targets.append(Target(name, GATEWAY, server, upstream, backend))


def start_all(workdir: Path, names: Sequence[str]) -> Deployment:
    deployment = Deployment()
    ports: set[int] = set()
    try:
        for name in names:
            _start_target(name, workdir, deployment, ports)
    except BaseException:
        deployment.stop()
        raise
    return deployment


async def _ready(target: Target) -> None:
    if target.upstream is not None:
        await wait_until_ready(
            target.upstream, "POST", CHAT_PATH, chat_body("readiness"), UPSTREAM_START_SECONDS
        )
    method, path = READINESS[target.kind]
    body = chat_body("readiness") if method == "POST" else b""
    started = time.monotonic()
    await wait_until_ready(target.server, method, path, body, START_SECONDS)
    say(f"{target.name} ready on port {target.server.port} ({time.monotonic() - started:.1f} s)")


def _probes(target: Target, redis: RedisServer | None) -> dict[str, ProcessProbe]:
    probes = {"server": ProcessProbe(target.name, target.server.process.pid)}
    if target.upstream is not None:
        probes["upstream"] = ProcessProbe("upstream", target.upstream.process.pid)
    if target.backend == REDIS and redis is not None:
        pid = child_pid_with("redis-server", str(redis.port))
        if pid is not None:
            probes["redis"] = ProcessProbe("redis", pid)
    return probes


def _cpu(probes: dict[str, ProcessProbe], name: str) -> float | None:
    probe = probes.get(name)
    return None if probe is None else probe.cpu_seconds()


async def measured(
    probes: dict[str, ProcessProbe], phase: Callable[[], Awaitable[PhaseStats]]
) -> tuple[PhaseStats, Usage]:
    """Run `phase`, with CPU seconds of each process and the server's peak RSS over it."""
    server = probes["server"]
    per_phase = server.reset_peak()
    before = {name: _cpu(probes, name) for name in ("server", "upstream", "redis")}
    client_before, busy_before = time.process_time(), machine_busy_seconds()
    stats = await phase()
    client_cpu = time.process_time() - client_before
    busy = machine_busy_seconds() - busy_before
    after = {name: _cpu(probes, name) for name in ("server", "upstream", "redis")}

    def spent(name: str) -> float | None:
        start, end = before[name], after[name]
        return None if start is None or end is None else end - start

    server_cpu = spent("server")
    assert server_cpu is not None  # the server probe always exists
    ours = server_cpu + client_cpu + sum(spent(n) or 0.0 for n in ("upstream", "redis"))
    usage = Usage(
        server_cpu=server_cpu,
        upstream_cpu=spent("upstream"),
        redis_cpu=spent("redis"),
        client_cpu=client_cpu,
        other_cpu=max(0.0, busy - ours),
        peak_rss_bytes=server.peak_rss_bytes(),
        rss_bytes=server.rss_bytes(),
        peak_is_per_phase=per_phase,
    )
    return stats, usage


@dataclass(frozen=True, slots=True)
class Plan:
    workloads: list[Workload]
    concurrencies: list[int]
    duration: float
    warmup: float
    seed: int
    rounds: int = 1


async def run_phase(
    target: Target,
    deployment: Deployment,
    bank: PromptBank,
    cursors: Cursors,
    workload: Workload,
    concurrency: int,
    plan: Plan,
) -> dict[str, Any]:
    source = request_source(bank, workload, cursors, f"{plan.seed}/{workload.name}/{concurrency}")
    if plan.warmup > 0:
        await closed_loop(target, workload.name, source, concurrency, plan.warmup)
    if target.caches and REPEAT in workload.kinds:
        # After the warm-up: the proxy's FIFO cache may have evicted them meanwhile.
        await prime(target, bank.hot)
    stats, usage = await measured(
        deployment.probes[target.name],
        lambda: closed_loop(target, workload.name, source, concurrency, plan.duration),
    )
    row = phase_row(target, workload.name, concurrency, stats, usage)
    latency = row["latency_ms"]
    say(
        f"{workload.name:<5} c={concurrency:<3} {target.name:<16} {row['rps']:>8.1f} req/s  "
        f"p50 {latency['p50']} ms  p99 {latency['p99']} ms  errors {row['errors']}  "
        f"unexpected {row['unexpected_layer']}"
    )
    return row


async def _prepare(deployment: Deployment, bank: PromptBank) -> dict[str, dict[str, Any]]:
    """Wait for every server, prime the caches; per target, its state at the start."""
    await asyncio.gather(*(_ready(t) for t in deployment.targets))
    for target in deployment.targets:
        deployment.probes[target.name] = _probes(target, deployment.redis)
        questions = target.questions_to_prime(bank)
        if questions:
            say(f"priming {target.name}: {len(questions)} questions")
            await prime(target, questions)
    return {
        t.name: {
            "rss_mib_after_start_and_priming": round(
                deployment.probes[t.name]["server"].rss_bytes() / MIB, 1
            ),
            "storage_at_start": await _storage(t),
        }
        for t in deployment.targets
    }


async def _storage(target: Target) -> dict[str, Any] | None:
    """The gateway's storage as /readyz reports it (Redis: `failures_total`): a store
    that failed is served by the fail-open path, which is not what a phase measures."""
    return await storage_state(target.server) if target.kind == GATEWAY else None


async def _all_phases(
    deployment: Deployment, bank: PromptBank, plan: Plan
) -> tuple[list[dict[str, Any]], dict[str, Cursors]]:
    cursors = {t.name: Cursors() for t in deployment.targets}
    rows: list[dict[str, Any]] = []
    phase_index = 0
    for workload in plan.workloads:
        for concurrency in plan.concurrencies:
            rounds: dict[str, list[dict[str, Any]]] = {t.name: [] for t in deployment.targets}
            # Targets take turns within each round, so slow drift of a shared machine
            # spreads over all of them; the order rotates so that none always runs first
            # (right after another's load).
            for _ in range(plan.rounds):
                shift = phase_index % len(deployment.targets)
                phase_index += 1
                for target in deployment.targets[shift:] + deployment.targets[:shift]:
                    cursor = cursors[target.name]
                    rounds[target.name].append(
                        await run_phase(
                            target, deployment, bank, cursor, workload, concurrency, plan
                        )
                    )
            rows.extend(combine_rounds(rounds[t.name]) for t in deployment.targets)
    return rows, cursors


async def run(plan: Plan, names: Sequence[str], workdir: Path, hot: int) -> dict[str, Any]:
    say(f"building prompts (seed {plan.seed})")
    bank = PromptBank.build(plan.seed, hot, FRESH_PROMPTS)
    deployment = start_all(workdir, names)
    try:
        targets = await _prepare(deployment, bank)
        rows, cursors = await _all_phases(deployment, bank, plan)
        for target in deployment.targets:
            state = targets[target.name]
            state["storage_at_end"] = await _storage(target)
            state["prompt_lists_started_over"] = cursors[target.name].wraps
    finally:
        deployment.stop()
    return _result(plan, deployment, rows, targets, bank)


def _result(
    plan: Plan,
    deployment: Deployment,
    rows: list[dict[str, Any]],
    targets: dict[str, dict[str, Any]],
    bank: PromptBank,
) -> dict[str, Any]:
    info = machine()
    result = {
        "benchmark": "load",
        "machine": info,
        "client": CLIENT_NAME,
        "settings": {
            "duration_seconds": plan.duration,
            "rounds": plan.rounds,
            "warmup_seconds": plan.warmup,
            "concurrency": plan.concurrencies,
            "workloads": {w.name: w.description for w in plan.workloads},
            "seed": plan.seed,
            "primed_questions": len(bank.primed),
            "repeated_questions": len(bank.hot),
            "paraphrases": len(bank.paraphrases),
            "new_prompts": len(bank.fresh),
        },
        "targets": {
            t.name: {"kind": t.kind, "backend": t.backend, **targets[t.name]}
            for t in deployment.targets
        },
        "notes": notes(rows, plan.duration, info["cpu_count"]),
        "rows": rows,
        "ok": all(r["errors"] == 0 and r["unexpected_layer"] == 0 for r in rows)
        and not store_failures(targets),
    }
    return derive(result)


def _failures(result: dict[str, Any]) -> list[str]:
    failures = [
        f"{name}: {count} Redis operations failed (answers went through the fail-open path)"
        for name, count in store_failures(result["targets"]).items()
    ]
    for row in result["rows"]:
        where = f"{row['workload']} c={row['concurrency']} {row['target']}"
        if row["errors"]:
            failures.append(f"{where}: {row['errors']} errors (first: {row['first_error']})")
        if row["unexpected_layer"]:
            failures.append(
                f"{where}: {row['unexpected_layer']} answers from an unexpected layer "
                f"(first: {row['first_unexpected']})"
            )
    return failures


def _list(text: str, allowed: Sequence[str], what: str) -> list[str]:
    items = [item.strip() for item in text.split(",") if item.strip()]
    unknown = [item for item in items if item not in allowed]
    if unknown or not items:
        raise SystemExit(f"load.py: --{what} takes a comma list of {', '.join(allowed)}")
    return items


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument(
        "--warmup", type=float, default=DEFAULT_WARMUP_SECONDS, help="unmeasured seconds first"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every phase this many times, targets taking turns; report the median",
    )
    parser.add_argument("--concurrency", default=DEFAULT_CONCURRENCY, help="comma list")
    parser.add_argument("--workloads", default=DEFAULT_WORKLOADS, help="comma list")
    parser.add_argument("--targets", default=",".join(TARGET_NAMES), help="comma list")
    parser.add_argument("--hot", type=int, default=100, help="questions the repeats use")
    parser.add_argument("--seed", type=int, help="prompt seed (default: a new one)")
    parser.add_argument("--output", help="also write the results as JSON to this path")
    parser.add_argument(
        "--markdown-out", help="also write the README's load-benchmark block to this path"
    )
    parser.add_argument(
        "--render-readme",
        metavar="RESULT_JSON",
        help="measure nothing: replace the README's load-benchmark block with this result's",
    )
    parser.add_argument(
        "--readme",
        default=str(README),
        help="the README --render-readme rewrites (default: the repository's)",
    )
    return parser.parse_args(argv)


def _run_async(coroutine: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
    """On uvloop when installed: less client CPU per request, for every target alike."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


def render_readme(result_path: str, readme: str) -> int:
    """The README's block regenerated from a `--output` JSON of an earlier run."""
    try:
        changed = regenerate_readme(result_path, readme)
    except (OSError, orjson.JSONDecodeError, KeyError, MarkersError) as exc:
        print(f"load.py: --render-readme: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    say(f"{readme}: load-benchmark block {'replaced' if changed else 'already up to date'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.render_readme:
        return render_readme(args.render_readme, args.readme)
    names = [n for n in TARGET_NAMES if n in _list(args.targets, TARGET_NAMES, "targets")]
    plan = Plan(
        workloads=[WORKLOADS[w] for w in _list(args.workloads, list(WORKLOADS), "workloads")],
        concurrencies=sorted({int(c) for c in args.concurrency.split(",") if c.strip()}),
        duration=args.duration,
        warmup=args.warmup,
        seed=args.seed if args.seed is not None else random.SystemRandom().randrange(2**32),
        rounds=max(1, args.rounds),
    )
    phases = len(plan.workloads) * len(plan.concurrencies) * len(names) * plan.rounds
    say(
        f"{phases} phases of {plan.duration:g} s (+{plan.warmup:g} s warm-up) on "
        f"{', '.join(names)}: about {phases * (plan.duration + plan.warmup + 1) / 60:.0f} min"
    )
    with tempfile.TemporaryDirectory(prefix="gateway-load-") as tmp:
        try:
            result = _run_async(run(plan, names, Path(tmp), args.hot))
        except (BenchError, FileNotFoundError) as exc:
            print(f"load.py: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("load.py: interrupted", file=sys.stderr)
            return 130
    print(render(result), flush=True)
    if args.output:
        write_json(args.output, result)
    if args.markdown_out:
        Path(args.markdown_out).write_text(readme_block(result), encoding="utf-8")
        say(f"README block written to {args.markdown_out}")
    for failure in _failures(result):
        print(f"FAIL: {failure}", file=sys.stderr)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
