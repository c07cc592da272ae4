"""The processes and the table of `gateway eval knowledge-reuse`: for each policy (knowledge
answers cached, then the baseline that bypasses them) a fresh fake upstream and a fresh
`gateway serve` on the chosen backend, measured by `knowledge_reuse.measure`."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from gateway_tools.bench.constants import EMBEDDED, GATEWAY_START_SECONDS, HOST, REDIS, BenchError
from gateway_tools.bench.processes import (
    Server,
    start_redis,
    start_servers,
    stop,
    storage_config,
    wait_for_servers,
)
from gateway_tools.bench.report.common import machine, say
from gateway_tools.evaluation.knowledge_reuse import measure, policy_yaml
from gateway_tools.evaluation.knowledge_reuse_sets import SETS

# (name, knowledge.cache_answers, knowledge loaded)
MODES = (("cached", True, True), ("baseline", False, True), ("no_knowledge", True, False))


def _start(workdir: Path, storage: dict[str, Any], cache_answers: bool) -> tuple[Server, Server]:
    policy = workdir.parent / f"{workdir.name}-policy.yaml"
    policy.write_text(policy_yaml(cache_answers))
    return start_servers(workdir, storage, policy)


def _run_mode(root: Path, backend: str, redis_url: str | None, mode: tuple[str, bool, bool]) -> Any:
    name, cache, with_knowledge = mode
    workdir = root / name
    workdir.mkdir()
    servers: tuple[Server, ...] = ()
    try:
        servers = _start(workdir, storage_config(backend, workdir, redis_url), cache)
        asyncio.run(wait_for_servers(*servers, GATEWAY_START_SECONDS))
        say(f"{name}: knowledge.cache_answers {str(cache).lower()}", "knowledge-reuse")
        return measure(f"http://{HOST}:{servers[1].port}", with_knowledge)
    finally:
        for server in reversed(servers):
            stop(server.process)


def run_knowledge_reuse_eval(backend: str, output: str | None, command_line: str) -> int:
    if backend not in (EMBEDDED, REDIS):
        print(f"gateway eval knowledge-reuse: --backend must be {EMBEDDED} or {REDIS}")
        return 2
    results: dict[str, Any] = {"backend": backend, "command": command_line, "machine": machine()}
    with tempfile.TemporaryDirectory(prefix="gateway-knowledge-reuse-") as tmp:
        root = Path(tmp)
        redis = start_redis(root) if backend == REDIS else None
        try:
            for mode in MODES:
                url = None if redis is None else redis.url
                results[mode[0]] = _run_mode(root, backend, url, mode)
        except BenchError as exc:
            print(f"gateway eval knowledge-reuse: {exc}")
            return 1
        finally:
            if redis is not None:
                redis.stop()
    print(format_table(results))
    if output:
        Path(output).write_text(json.dumps(results, indent=2))
    return 0 if _gate_holds(results) else 1


def _gate_holds(results: dict[str, Any]) -> bool:
    """No false reuse where every reuse is wrong, and none at all in the baseline."""
    cached, baseline = results["cached"], results["baseline"]
    if any(cached[name]["false_reuse"] for name in ("other_condition", "after_change")):
        return False
    return all(baseline[name]["exact"] + baseline[name]["semantic"] == 0 for name in SETS)


def format_table(results: dict[str, Any]) -> str:
    cached, baseline, plain = results["cached"], results["baseline"], results["no_knowledge"]
    lines = [
        f"backend {results['backend']}; {cached['items']} knowledge items, "
        f"{cached['changed_items']} replaced before after_change",
        "| set | requests | reuse (exact/semantic) | false reuse (rate, 95 % upper) "
        "| p50 / p95 ms | baseline reuse, p50 / p95 ms | no knowledge: reuse (false) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in SETS:
        row, base, ref = cached[name], baseline[name], plain[name]
        lines.append(
            f"| {name} | {row['requests']} | {row['reuse_rate']:.1%} "
            f"({row['exact']}/{row['semantic']}) | {row['false_reuse']} "
            f"({row['false_reuse_rate']:.1%}, {row['false_reuse_wilson95_upper']:.1%}) "
            f"| {row['p50_ms']} / {row['p95_ms']} | {base['reuse_rate']:.1%}, "
            f"{base['p50_ms']} / {base['p95_ms']} "
            f"| {ref['reuse_rate']:.1%} ({ref['false_reuse']}) |"
        )
    return "\n".join(lines)
