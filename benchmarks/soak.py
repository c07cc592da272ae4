"""Soak: the gateway on Redis at a fixed request rate, with a Redis restart midway.

    python benchmarks/soak.py [--minutes 5] [--rate 50] [--output soak.json]

Starts Redis (`gateway.testing.redis_server`), the fake upstream and `gateway serve` on
the Redis backend, primes the 300 questions of the mixed workload (see
`gateway_tools.bench.prompts`), then sends the mix (60 % repeats, 20 % paraphrases, 20 % new) open
loop at `--rate` requests per second for `--minutes`. Halfway it kills Redis, waits
`--outage-pause` seconds and starts it again on the same port, empty (no persistence):
the gateway must answer every request all along (fail-open), then rebuild its cache.

Reports: failed requests (anything but a 200 counts; the goal is zero), the cache layers
before, during and after the outage and per 10 s, when exact and semantic hits came
back, and the gateway's RSS sampled every `--sample-every` seconds: start, after the
warm-up, max and end. "No memory growth" means the end RSS is within `--rss-tolerance`
(default 10 %) of the RSS after the warm-up. Exits 1 if a request failed, an answer came
from an unexpected layer before the outage, or memory grew past the tolerance.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gateway.testing.redis_server import RedisServer
from gateway_tools.bench.constants import (
    CLIENT_NAME,
    EXACT,
    MISS,
    REDIS,
    REDIS_START_SECONDS,
    SEMANTIC,
    BenchError,
)
from gateway_tools.bench.formatting import fmt, fmt_counts, ranked_counts
from gateway_tools.bench.openloop import Outcome, open_loop
from gateway_tools.bench.phases import prime
from gateway_tools.bench.processes import (
    Server,
    start_redis,
    start_servers,
    stop,
    storage_config,
    wait_for_servers,
)
from gateway_tools.bench.procstats import MIB, ProcessProbe, machine_busy_seconds
from gateway_tools.bench.prompts import (
    NEW,
    PARAPHRASE,
    REPEAT,
    WORKLOADS,
    Cursors,
    PromptBank,
    request_source,
)
from gateway_tools.bench.report import machine, percentiles, say, write_json
from gateway_tools.bench.runner import storage_state
from gateway_tools.bench.targets import GATEWAY, Target

GATEWAY_START_SECONDS = 120.0
MIX = WORKLOADS["mix"]
STORE_UNAVAILABLE = "store_unavailable"
BUCKET_SECONDS = 10.0
# "during" starts this long before the kill: a request due just before it may still be
# in flight when Redis dies, and then rightly misses; it belongs to the outage.
IN_FLIGHT_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Outage:
    down_at: float  # seconds from the start: Redis killed
    up_at: float  # Redis answering again


@dataclass(frozen=True, slots=True)
class Sample:
    at: float
    rss_bytes: int


async def restart_redis(redis: RedisServer, at: float, pause: float, start: float) -> Outage:
    """Kill Redis `at` seconds into the run, wait `pause` seconds, start it again."""
    await asyncio.sleep(max(0.0, start + at - time.perf_counter()))
    down = time.perf_counter()
    say(f"killing Redis at {down - start:.1f} s")
    await asyncio.to_thread(redis.stop)
    await asyncio.sleep(pause)
    await asyncio.to_thread(redis.start, REDIS_START_SECONDS)
    up = time.perf_counter()
    say(f"Redis answering again at {up - start:.1f} s (same port {redis.port}, empty)")
    return Outage(down - start, up - start)


async def sample_memory(
    probe: ProcessProbe, start: float, every: float, seconds: float
) -> list[Sample]:
    """The gateway's RSS at 0, every, 2*every ... up to `seconds`."""
    samples = []
    for index in range(int(seconds // every) + 1):
        await asyncio.sleep(max(0.0, start + index * every - time.perf_counter()))
        now = time.perf_counter() - start
        samples.append(Sample(now, probe.rss_bytes()))
    return samples


def period_of(outcome: Outcome, warmup: float, outage: Outage) -> str:
    if outcome.due < warmup:
        return "warm-up"
    if outcome.due < outage.down_at - IN_FLIGHT_SECONDS:
        return "before"
    return "during" if outcome.due < outage.up_at else "after"


def _unexpected(target: Target, outcomes: Iterable[Outcome]) -> int:
    count = 0
    for outcome in outcomes:
        allowed = target.allowed_layers(MIX.name, outcome.kind)
        if outcome.ok and allowed is not None and outcome.layer not in allowed:
            count += 1
    return count


def summarize(target: Target, outcomes: Sequence[Outcome]) -> dict[str, Any]:
    failed = [o for o in outcomes if not o.ok]
    layers = Counter(o.layer for o in outcomes if o.ok and o.layer)
    return {
        "requests": len(outcomes),
        "failed": len(failed),
        "first_failure": failed[0].error if failed else None,
        "latency_ms": percentiles([o.latency_ms for o in outcomes if o.ok]),
        "layers": ranked_counts(layers),
        "by_kind": ranked_counts(Counter(f"{o.kind}/{o.layer}" for o in outcomes if o.ok)),
        "reasons": ranked_counts(
            Counter(f"{o.layer}/{o.reason}" for o in outcomes if o.ok and o.reason)
        ),
        "unexpected_layer": _unexpected(target, outcomes),
    }


def _first(outcomes: Iterable[Outcome], after: float, kind: str, layer: str) -> float | None:
    """Seconds after `after` until a `kind` request due then was served from `layer`."""
    for outcome in outcomes:
        if outcome.due >= after and outcome.kind == kind and outcome.layer == layer:
            return round(outcome.due - after, 2)
    return None


def timeline(outcomes: Sequence[Outcome], samples: Sequence[Sample]) -> list[dict[str, Any]]:
    """Per 10 s: requests, failures, layers, p99, and the RSS sampled at its start."""
    buckets: dict[int, list[Outcome]] = {}
    for outcome in outcomes:
        buckets.setdefault(int(outcome.due // BUCKET_SECONDS), []).append(outcome)
    rss = {round(s.at / BUCKET_SECONDS): s.rss_bytes for s in samples}
    rows = []
    for index in sorted(buckets):
        items = buckets[index]
        ok = [o for o in items if o.ok]
        layers = Counter(o.layer for o in ok)
        rows.append(
            {
                "from_s": index * BUCKET_SECONDS,
                "requests": len(items),
                "failed": len(items) - len(ok),
                EXACT: layers[EXACT],
                SEMANTIC: layers[SEMANTIC],
                MISS: layers[MISS],
                STORE_UNAVAILABLE: sum(1 for o in ok if o.reason == STORE_UNAVAILABLE),
                "p99_ms": percentiles([o.latency_ms for o in ok])["p99"],
                "rss_mib": round(rss[index] / MIB, 1) if index in rss else None,
            }
        )
    return rows


def slope_mib_per_minute(samples: Sequence[Sample]) -> float | None:
    """Least-squares trend of the RSS: a leak keeps climbing, caches that fill up to
    their bounds flatten out; the end-vs-warm-up check alone cannot tell them apart."""
    if len(samples) < 3:
        return None
    times = [s.at for s in samples]
    mean_t = sum(times) / len(times)
    mean_r = sum(s.rss_bytes for s in samples) / len(samples)
    spread = sum((t - mean_t) ** 2 for t in times)
    if spread == 0:
        return None
    slope = sum((s.at - mean_t) * (s.rss_bytes - mean_r) for s in samples) / spread
    return round(slope * 60 / MIB, 2)


def memory_verdict(samples: Sequence[Sample], warmup: float, tolerance: float) -> dict[str, Any]:
    warm = next((s for s in samples if s.at >= warmup), samples[-1])
    start, end = samples[0], samples[-1]
    growth = end.rss_bytes - warm.rss_bytes
    return {
        "start_mib": round(start.rss_bytes / MIB, 1),
        "after_warmup_mib": round(warm.rss_bytes / MIB, 1),
        "after_warmup_at_s": round(warm.at, 1),
        "max_mib": round(max(s.rss_bytes for s in samples) / MIB, 1),
        "end_mib": round(end.rss_bytes / MIB, 1),
        "growth_mib": round(growth / MIB, 1),
        "growth_ratio": round(growth / warm.rss_bytes, 4) if warm.rss_bytes else None,
        "tolerance_ratio": tolerance,
        "no_growth": end.rss_bytes <= warm.rss_bytes * (1 + tolerance),
        "trend_mib_per_minute_last_third": slope_mib_per_minute(
            [s for s in samples if s.at >= samples[-1].at * 2 / 3]
        ),
        "samples": [
            {"at_s": round(s.at, 1), "rss_mib": round(s.rss_bytes / MIB, 1)} for s in samples
        ],
    }


@dataclass(frozen=True, slots=True)
class CpuReading:
    """CPU seconds so far: the whole machine (all cores), the gateway, its upstream, and
    this process (the client). The machine's minus ours is everything else: Redis, and
    whatever unrelated work shares the machine (it competes for the same cores)."""

    machine: float
    gateway: float
    upstream: float
    client: float

    @classmethod
    def now(cls, gateway: ProcessProbe, upstream: ProcessProbe | None) -> CpuReading:
        return cls(
            machine_busy_seconds(),
            gateway.cpu_seconds(),
            upstream.cpu_seconds() if upstream is not None else 0.0,
            time.process_time(),
        )

    def spent_since(self, before: CpuReading, seconds: float) -> dict[str, float]:
        spent = {
            "gateway": self.gateway - before.gateway,
            "upstream": self.upstream - before.upstream,
            "client": self.client - before.client,
        }
        other = self.machine - before.machine - sum(spent.values())
        return {k: round(v, 2) for k, v in {**spent, "other": max(0.0, other)}.items()} | {
            "seconds": round(seconds, 1)
        }


@dataclass(frozen=True, slots=True)
class Settings:
    minutes: float
    rate: float
    warmup: float
    outage_pause: float
    sample_every: float
    rss_tolerance: float
    seed: int

    @property
    def seconds(self) -> float:
        return self.minutes * 60


def _start(workdir: Path) -> tuple[RedisServer, Server, Server]:
    redis = start_redis(workdir)
    try:
        upstream, gateway = start_servers(workdir, storage_config(REDIS, workdir, redis.url))
    except BaseException:
        redis.stop()
        raise
    return redis, upstream, gateway


async def soak(settings: Settings, workdir: Path) -> dict[str, Any]:
    bank = PromptBank.build(settings.seed, hot_count=100, fresh_count=10_000)
    redis, upstream, gateway = _start(workdir)
    try:
        await wait_for_servers(upstream, gateway, GATEWAY_START_SECONDS)
        target = Target("gateway-redis", GATEWAY, gateway, upstream, REDIS)
        return await _measure(settings, target, bank, redis)
    finally:
        stop(gateway.process)
        stop(upstream.process)
        redis.stop()


async def _measure(
    settings: Settings, target: Target, bank: PromptBank, redis: RedisServer
) -> dict[str, Any]:
    say(f"priming {len(bank.primed)} questions")
    await prime(target, bank.primed)
    storage_before = await storage_state(target.server)
    probe = ProcessProbe(target.name, target.server.process.pid)
    source = request_source(bank, MIX, Cursors(), f"{settings.seed}/soak")
    say(
        f"sending the mix at {settings.rate:g} req/s for {settings.minutes:g} min; "
        f"Redis restart at {settings.seconds / 2:.0f} s"
    )
    upstream = ProcessProbe("upstream", target.upstream.process.pid) if target.upstream else None
    cpu_before = CpuReading.now(probe, upstream)
    start = time.perf_counter()
    load, outage, sampler = await asyncio.gather(
        open_loop(target, source, settings.rate, settings.seconds, start),
        restart_redis(redis, settings.seconds / 2, settings.outage_pause, start),
        sample_memory(probe, start, settings.sample_every, settings.seconds),
    )
    outcomes, max_lag = load
    final = Sample(time.perf_counter() - start, probe.rss_bytes())
    samples = [*sampler, final]
    cpu = CpuReading.now(probe, upstream).spent_since(cpu_before, final.at)
    storage_after = await storage_state(target.server)
    storage = {"before": storage_before, "after": storage_after}
    return _report(settings, target, outcomes, max_lag, outage, samples, storage) | {"cpu": cpu}


def _report(
    settings: Settings,
    target: Target,
    outcomes: list[Outcome],
    max_lag: float,
    outage: Outage,
    samples: list[Sample],
    storage: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    periods: dict[str, list[Outcome]] = {"warm-up": [], "before": [], "during": [], "after": []}
    for outcome in outcomes:
        periods[period_of(outcome, settings.warmup, outage)].append(outcome)
    summaries = {name: summarize(target, items) for name, items in periods.items()}
    memory = memory_verdict(samples, settings.warmup, settings.rss_tolerance)
    failed = sum(1 for o in outcomes if not o.ok)
    return {
        "benchmark": "soak",
        "machine": machine(),
        "client": f"{CLIENT_NAME}; open loop, a new connection when none is idle",
        "settings": {**asdict(settings), "workload": MIX.description},
        "requests": len(outcomes),
        "failed": failed,
        "achieved_rate": round(len(outcomes) / settings.seconds, 2),
        "max_send_lag_ms": round(max_lag * 1000, 2),
        "outage": {"down_at_s": round(outage.down_at, 2), "up_at_s": round(outage.up_at, 2)},
        "recovery_s": {
            "first_exact_hit": _first(outcomes, outage.up_at, REPEAT, EXACT),
            "first_semantic_hit": _first(outcomes, outage.up_at, PARAPHRASE, SEMANTIC),
        },
        "periods": {
            name: {**_bounds(name, settings, outage), **summary}
            for name, summary in summaries.items()
        },
        "timeline": timeline(outcomes, samples),
        "memory": memory,
        "storage": storage,
        "ok": failed == 0 and memory["no_growth"] and summaries["before"]["unexpected_layer"] == 0,
    }


def _bounds(name: str, settings: Settings, outage: Outage) -> dict[str, float]:
    edges = {
        "warm-up": (0.0, settings.warmup),
        "before": (settings.warmup, outage.down_at - IN_FLIGHT_SECONDS),
        "during": (outage.down_at - IN_FLIGHT_SECONDS, outage.up_at),
        "after": (outage.up_at, settings.seconds),
    }
    low, high = edges[name]
    return {"from_s": round(low, 2), "to_s": round(high, 2)}


def render(result: dict[str, Any]) -> str:
    s, m, memory, cpu = result["settings"], result["machine"], result["memory"], result["cpu"]
    outage = result["outage"]
    lines = [
        f"## soak: gateway on Redis, {s['rate']:g} req/s for {s['minutes']:g} min, "
        f"Redis killed at {outage['down_at_s']} s, back at {outage['up_at_s']} s",
        "",
        f"machine: {m['cpu_count']} CPUs (shared by the client, the gateway, the fake upstream "
        f"and Redis), Python {m['python']}",
        f"workload: {s['workload']}; seed {s['seed']}; {result['client']}",
        "",
        "| period | from s | to s | requests | failed | p50 ms | p99 ms | exact | semantic | miss "
        "| store unavailable | unexpected layer |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for name, period in result["periods"].items():
        layers, latency = period["layers"], period["latency_ms"]
        unavailable = period["reasons"].get(f"{MISS}/{STORE_UNAVAILABLE}", 0)
        # During and after the outage misses are the point (Redis down, then empty).
        unexpected = period["unexpected_layer"] if name in ("warm-up", "before") else "—"
        lines.append(
            f"| {name} | {period['from_s']} | {period['to_s']} | {period['requests']} "
            f"| {period['failed']} | {fmt(latency['p50'])} | {fmt(latency['p99'])} "
            f"| {layers.get(EXACT, 0)} | {layers.get(SEMANTIC, 0)} | {layers.get(MISS, 0)} "
            f"| {unavailable} | {unexpected} |"
        )
    lines += [
        "",
        "unexpected layer: a repeat not exact, a paraphrase not semantic or a new prompt not a "
        f'miss; "during" starts {IN_FLIGHT_SECONDS:g} s before the kill (requests in flight)',
        "",
        "| by kind | " + " | ".join(result["periods"]) + " |",
    ]
    lines.append("|---|" + "---|" * len(result["periods"]))
    for kind in (REPEAT, PARAPHRASE, NEW):
        cells = [
            fmt_counts(
                {k.split("/", 1)[1]: v for k, v in p["by_kind"].items() if k.startswith(kind + "/")}
            )
            for p in result["periods"].values()
        ]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| t s | requests | failed | exact | semantic | miss | store unavailable | p99 ms "
        "| RSS MiB |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in result["timeline"]:
        lines.append(
            f"| {row['from_s']:.0f} | {row['requests']} | {row['failed']} | {row[EXACT]} "
            f"| {row[SEMANTIC]} | {row[MISS]} | {row[STORE_UNAVAILABLE]} | {fmt(row['p99_ms'])} "
            f"| {fmt(row['rss_mib'])} |"
        )
    recovery = result["recovery_s"]
    verdict = "no memory growth" if memory["no_growth"] else "MEMORY GREW past the tolerance"
    lines += [
        "",
        f"failed requests: {result['failed']} of {result['requests']} "
        f"(achieved {result['achieved_rate']} req/s; client send lag max "
        f"{result['max_send_lag_ms']} ms)",
        f"after Redis was back: first exact hit after {fmt(recovery['first_exact_hit'])} s, "
        f"first semantic hit after {fmt(recovery['first_semantic_hit'])} s",
        f"gateway RSS: start {memory['start_mib']} MiB, after warm-up "
        f"({memory['after_warmup_at_s']} s) {memory['after_warmup_mib']} MiB, max "
        f"{memory['max_mib']} MiB, end {memory['end_mib']} MiB: end − after warm-up "
        f"{memory['growth_mib']:+} MiB ({fmt(memory['growth_ratio'] * 100, ' %')}; tolerance "
        f"{memory['tolerance_ratio'] * 100:g} %): {verdict}; RSS trend over the last third "
        f"of the run: {fmt(memory['trend_mib_per_minute_last_third'], ' MiB/min')}",
        f"CPU seconds over the {cpu['seconds']:.0f} s run: gateway {cpu['gateway']} "
        f"({cpu['gateway'] / cpu['seconds'] * 100:.0f} % of one core), fake upstream "
        f"{cpu['upstream']}, client {cpu['client']}, everything else {cpu['other']} (Redis, "
        "and any unrelated work on the machine)",
        f"Redis failures counted by the gateway: "
        f"{_failures(result['storage']['before'], result['storage']['after'])}",
    ]
    return "\n".join(lines)


def _failures(before: dict[str, Any], after: dict[str, Any]) -> str:
    if "failures_total" not in after:
        return "n/a"
    delta = int(after["failures_total"]) - int(before.get("failures_total", 0))
    return f"{delta} (available after the run: {after.get('available')})"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--rate", type=float, default=50.0, help="requests per second")
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds before 'before'")
    parser.add_argument("--outage-pause", type=float, default=5.0, help="seconds Redis is down")
    parser.add_argument("--sample-every", type=float, default=10.0, help="RSS sample period")
    parser.add_argument("--rss-tolerance", type=float, default=0.10, help="allowed growth")
    parser.add_argument("--seed", type=int, help="prompt seed (default: a new one)")
    parser.add_argument("--output", help="also write the results as JSON to this path")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    settings = Settings(
        minutes=args.minutes,
        rate=args.rate,
        warmup=args.warmup,
        outage_pause=args.outage_pause,
        sample_every=args.sample_every,
        rss_tolerance=args.rss_tolerance,
        seed=args.seed if args.seed is not None else random.SystemRandom().randrange(2**32),
    )
    if settings.warmup >= settings.seconds / 2:
        print("soak.py: --warmup must end before the outage (half the run)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gateway-soak-") as tmp:
        try:
            result = asyncio.run(soak(settings, Path(tmp)))
        except BenchError as exc:
            print(f"soak.py: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("soak.py: interrupted", file=sys.stderr)
            return 130
    print(render(result), flush=True)
    if args.output:
        write_json(args.output, result)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
