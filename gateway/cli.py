"""Command line: `gateway serve`, `bench`, `eval`, `calibrate`, `policy check`, `cache
import` and `memory cleanup`."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit

from gateway.settings import (
    HASHED_KEY_PREFIX,
    ConfigError,
    GatewayConfig,
    config_path_from,
    load_config,
)
from gateway.telemetry.logs import configure_logging, is_sensitive_key


def _known_secrets(config: GatewayConfig) -> list[str]:
    """Plaintext credentials in the config, to be redacted from every log line."""
    secrets = [key for tenant in config.auth.tenants for key in tenant.api_keys]
    secrets += config.auth.admin_keys
    # Hashed entries are not secrets (and redacting them would hide nothing).
    secrets = [key for key in secrets if not key.startswith(HASHED_KEY_PREFIX)]
    for deployment in config.model_list:
        params = deployment.litellm_params
        if isinstance(params.api_key, str):
            secrets.append(params.api_key)
        for name, value in (params.model_extra or {}).items():
            if isinstance(value, str) and is_sensitive_key(name):
                secrets.append(value)
    if config.storage.redis_url:
        try:
            password = urlsplit(config.storage.redis_url).password
        except ValueError:
            password = None
        if password:
            secrets.append(password)
    return secrets


def _configure_logging(config: GatewayConfig, log_format: str = "json") -> None:
    configure_logging(
        config.server.log_level,
        json=log_format != "text",
        secrets=_known_secrets(config),
    )


def _serve(args: argparse.Namespace) -> int:
    path = config_path_from(args.config)
    try:
        config, warnings = load_config(path)
    except ConfigError as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    _configure_logging(config, args.log_format)
    for warning in warnings:
        logging.getLogger("gateway.config").warning("%s: %s", path, warning)
    # Math libraries must not fight over the two cores with the event loop.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    import uvicorn

    from gateway.app import create_app
    from gateway.http_protocol import uvicorn_limit_options

    uvicorn.run(
        create_app(config),
        **uvicorn_limit_options(config.server),
        host=args.host or config.server.host,
        port=args.port or config.server.port,
        log_level=config.server.log_level,
        access_log=False,  # the gateway logs its own decision line per request
        log_config=None,  # keep the redacting root handler; uvicorn's loggers propagate to it
        server_header=False,
    )
    return 0


def _bench(args: argparse.Namespace) -> int:
    from gateway_tools.bench import run_benchmark
    from gateway_tools.bench.apis import parse_apis

    try:
        apis = parse_apis(args.apis)
    except ValueError as exc:
        print(f"gateway bench: {exc}", file=sys.stderr)
        return 2
    from pathlib import Path

    return run_benchmark(
        requests=args.requests,
        output=args.output,
        backend=args.backend,
        apis=apis,
        policy=Path(args.policy) if args.policy else None,
    )


def _eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.what == "memory":
        import shlex

        from gateway_tools.evaluation.memory_recall import run_memory_eval

        return run_memory_eval(
            Path(args.data) if args.data else None,
            conversations=args.conversations,
            budgets=args.budgets,
            policy_path=args.policy,
            output=args.output,
            command_line=shlex.join(["gateway", *sys.argv[1:]]),
        )

    if args.what == "adaptive":
        return _eval_adaptive(args)

    if args.what == "prefix":
        from gateway_tools.evaluation.prefix_stability import run_prefix_eval

        return run_prefix_eval(
            Path(args.data) if args.data else None,
            conversations=args.conversations,
            output=args.output,
        )

    if args.what == "knowledge":
        from gateway_tools.evaluation.knowledge_merge import run_knowledge_eval

        return run_knowledge_eval(
            Path(args.data) if args.data else None,
            conversations=args.conversations,
            budgets=args.budgets,
        )

    if args.what == "knowledge-reuse":
        return _eval_knowledge_reuse(args)

    if args.what == "freshness":
        from gateway_tools.evaluation.freshness import run_freshness_eval

        return run_freshness_eval(changes=300 if args.limit is None else args.limit)

    return _eval_labelled(args)


def _eval_labelled(args: argparse.Namespace) -> int:
    """`gateway eval pairs | classifier | probes`."""
    from pathlib import Path

    from gateway_tools.evaluation.run import DEFAULT_SETS, run_eval

    try:
        reviewer_errors = _reviewer_errors(args.reviewer_errors)
    except ValueError as exc:
        print(f"gateway eval: {exc}", file=sys.stderr)
        return 2
    return run_eval(
        args.what,
        Path(args.data) if args.data else None,
        sets=args.sets.split(",") if args.sets else DEFAULT_SETS,
        limit=2000 if args.limit is None else args.limit,
        protocols=args.protocols.split(","),
        output=args.output,
        half=args.half,
        reviewer_weights=Path(args.reviewer_weights) if args.reviewer_weights else None,
        ablation=args.ablation,
        target_precision=args.target_precision,
        reviewer_errors=reviewer_errors,
    )


def _reviewer_errors(text: str | None) -> tuple[float, float] | None:
    """`--reviewer-errors ACCEPT_DUP,ACCEPT_NONDUP`, e.g. "0.90,0.05"."""
    if text is None:
        return None
    parts = text.split(",")
    try:
        accept_dup, accept_nondup = (float(part) for part in parts)
    except ValueError:
        raise ValueError(
            f"--reviewer-errors takes ACCEPT_DUP,ACCEPT_NONDUP (e.g. 0.90,0.05), not {text!r}"
        ) from None
    if not (0.0 <= accept_dup <= 1.0 and 0.0 <= accept_nondup <= 1.0):
        raise ValueError("--reviewer-errors: both rates must be in [0, 1]")
    return accept_dup, accept_nondup


def _eval_knowledge_reuse(args: argparse.Namespace) -> int:
    import shlex

    from gateway_tools.evaluation.knowledge_reuse_run import run_knowledge_reuse_eval

    command_line = shlex.join(["gateway", *sys.argv[1:]])
    return run_knowledge_reuse_eval(args.backend, args.output, command_line)


def _eval_adaptive(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gateway_tools.evaluation.adaptive_run import ADAPTIVE_SETS, run_adaptive_eval
    from gateway_tools.evaluation.adaptive_sim import SimulationSettings

    try:
        judge_errors = [float(x) for x in args.judge_errors.split(",") if x.strip()]
        for judge_error in judge_errors:  # each one is checked as a setting
            SimulationSettings(judge_error=judge_error)
        settings = SimulationSettings(
            static_threshold=args.static_threshold,
            floor=args.floor,
            shadow_rate=args.shadow_rate,
            audit_rate=args.audit_rate,
            correct_judge_errors=not args.uncorrected_judge,
            per_language=args.per_language,
            seed=args.seed,
        )
    except ValueError as exc:
        print(f"gateway eval adaptive: {exc}", file=sys.stderr)
        return 2
    return run_adaptive_eval(
        Path(args.data) if args.data else None,
        args.sets.split(",") if args.sets else list(ADAPTIVE_SETS),
        limit=20_000 if args.limit is None else args.limit,
        half=args.half,
        settings=settings,
        target_precision=args.target_precision,
        judge_errors=judge_errors,
        min_stream=args.min_stream,
        output=args.output,
        plot_dir=Path(args.plot_dir) if args.plot_dir else None,
        cache_dir=Path(args.signals_cache) if args.signals_cache else None,
        probe_dir=Path(args.probe_dir),
    )


def _calibrate(args: argparse.Namespace) -> int:
    """`gateway calibrate`: fits the configured embedder (or `--embedder`) with
    `gateway_tools.evaluation.calibrate`; the file goes to `semantic.calibration`."""
    embedder, config_path = args.embedder, None
    if embedder is None or embedder.startswith("litellm:"):
        path = config_path_from(args.config)
        try:
            config, _ = load_config(path)
        except ConfigError as exc:
            print(f"gateway: {exc}", file=sys.stderr)
            return 2
        config_path = str(path)
        if embedder is None:
            name = config.semantic.embedder
            embedder = "use-multilingual-v3" if name == "local" else f"litellm:{name}"
    from gateway_tools.evaluation.calibrate import main as fit

    argv = ["--data", args.data, "--embedder", embedder, "--out", args.out]
    argv += ["--method", args.method, "--knots", str(args.knots)]
    argv += ["--batch-size", str(args.batch_size)]
    return fit([*argv, "--config", config_path] if config_path else argv)


def _policy_check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gateway.policy.check import run_check

    return run_check(Path(args.path))


def _memory_cleanup(args: argparse.Namespace) -> int:
    from gateway.memory.cleanup_command import run_cleanup

    return run_cleanup(args.url, args.tenant, args.user)


def _cache_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gateway.warmup.command import UsageError, import_options, run_import

    path = config_path_from(args.config)
    try:
        config, warnings = load_config(path)
        options = import_options(
            config,
            Path(args.file),
            tenant=args.tenant,
            namespace=args.namespace,
            include_user_records=args.include_user_records,
            seed_adaptive=args.seed_adaptive,
        )
    except (ConfigError, UsageError) as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    _configure_logging(config, "text")
    for warning in warnings:
        logging.getLogger("gateway.config").warning("%s: %s", path, warning)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return run_import(
        config,
        Path(args.file),
        options,
        output=Path(args.output) if args.output else None,
        show_progress=True if args.progress else None,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gateway", description="OpenAI-compatible LLM gateway")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the gateway")
    serve.add_argument(
        "--config", help="config file (default: $GATEWAY_CONFIG or config/gateway.yaml)"
    )
    serve.add_argument("--host", help="bind address (default: server.host from the config)")
    serve.add_argument("--port", type=int, help="port (default: server.port from the config)")
    serve.add_argument(
        "--log-format",
        choices=("json", "text"),
        default="json",
        help="json: one JSON object per line (default); text: one readable line",
    )
    serve.set_defaults(handler=_serve)

    bench = commands.add_parser(
        "bench", help="measure cache-hit latency and miss overhead against a local fake upstream"
    )
    bench.add_argument("--requests", type=int, default=400, help="requests per measurement")
    bench.add_argument("--output", help="also write the results as JSON to this path")
    bench.add_argument(
        "--backend",
        choices=("embedded", "redis", "both"),
        default="embedded",
        help="storage backend: embedded, redis, or both side by side in one run",
    )
    bench.add_argument(
        "--apis",
        default="chat,completions,responses,messages",
        help="APIs whose exact hits, misses and hit throughput are measured side by side "
        "(comma-separated; default: all four)",
    )
    bench.add_argument(
        "--policy",
        help="a policy file the gateway runs under (e.g. rate limits; default: the built-in)",
    )
    bench.set_defaults(handler=_bench)

    evaluate = commands.add_parser(
        "eval",
        help="measure caching decisions and memory recall on labeled data "
        "(pairs, classifier, probes, memory; adaptive: replay pair sets as traffic "
        "through the adaptive threshold)",
    )
    evaluate.add_argument(
        "what",
        choices=[
            "pairs",
            "classifier",
            "probes",
            "memory",
            "adaptive",
            "prefix",
            "freshness",
            "knowledge",
            "knowledge-reuse",
        ],
    )
    evaluate.add_argument("--data", help="the shared labeled-data folder (e.g. ../shared/data)")
    evaluate.add_argument(
        "--sets",
        help="pair sets, comma-separated (default: qqp,lcqmc,paws_en,pawsx_zh; adaptive: "
        "lcqmc,qqp,bq,afqmc,paws_en,pawsx_zh,probes)",
    )
    evaluate.add_argument(
        "--limit",
        type=int,
        help="pairs per set (default 2000; adaptive: 20000; freshness: changes per backend, 300)",
    )
    evaluate.add_argument("--protocols", default="pair,pool", help="pair, pool or both")
    evaluate.add_argument("--output", help="also write the results as JSON to this path")
    evaluate.add_argument(
        "--half",
        choices=["a", "b"],
        help="pairs: only this half of each set (split by first sentence), to measure a "
        "reviewer trained on the other half "
        "(python -m gateway_tools.training.train_reviewer --half)",
    )
    evaluate.add_argument(
        "--reviewer-weights", help="pairs: local reviewer weights to use instead of the packaged"
    )
    evaluate.add_argument(
        "--reviewer-errors",
        metavar="ACCEPT_DUP,ACCEPT_NONDUP",
        help="pairs: also judge with a simulated chat-model reviewer in the review band "
        "[review.band_floor, threshold) that says 'same' with probability ACCEPT_DUP on "
        "duplicate pairs and ACCEPT_NONDUP on the others (e.g. 0.90,0.05; deterministic), "
        "reported next to the offline default",
    )
    evaluate.add_argument(
        "--ablation",
        action="store_true",
        help="pairs: also judge each set with each check switched off in turn (pair protocol)",
    )
    evaluate.add_argument(
        "--target-precision",
        type=float,
        help="pairs, probes, adaptive: semantic_cache.target_precision to measure (default: "
        "the policy's; adaptive: 0.97, 0.92 for qqp)",
    )
    _add_adaptive_arguments(evaluate)
    evaluate.add_argument(
        "--conversations", help="memory: LoCoMo conversations, e.g. 0-4 or 0,2 (default: all)"
    )
    evaluate.add_argument(
        "--budgets", default="256,512,1024", help="memory: token budgets (default 256,512,1024)"
    )
    evaluate.add_argument(
        "--policy", help="memory: a policy YAML whose memory section to use (default: built-in)"
    )
    evaluate.add_argument(
        "--backend",
        choices=["embedded", "redis"],
        default="embedded",
        help="knowledge-reuse: the storage backend of the gateway measured (default embedded)",
    )
    evaluate.set_defaults(handler=_eval)

    calibrate = commands.add_parser(
        "calibrate",
        help="fit the configured embedder's calibration (raw cosine -> the calibrated "
        "scale policy thresholds are on) on the labelled pairs, for semantic.calibration",
    )
    calibrate.add_argument("--data", required=True, help="the shared labelled-data folder")
    calibrate.add_argument("--out", required=True, help="the calibration JSON to write")
    calibrate.add_argument(
        "--config", help="config file (default: $GATEWAY_CONFIG or config/gateway.yaml)"
    )
    calibrate.add_argument(
        "--embedder",
        help="litellm:<model_name> or use-multilingual-v3 (default: the config's "
        "semantic.embedder)",
    )
    calibrate.add_argument(
        "--method",
        choices=("precision", "isotonic", "threshold-precision"),
        default="precision",
        help="the scale fitted (default precision: the shipped one)",
    )
    calibrate.add_argument("--knots", type=int, default=24, help="at most this many per curve")
    calibrate.add_argument("--batch-size", type=int, default=64, help="texts per embedding call")
    calibrate.set_defaults(handler=_calibrate)

    policy_commands = _command_group(commands, "policy", "work with policy files")
    check = policy_commands.add_parser(
        "check",
        help="validate policy files offline: prints 'ok: N files' or every error, exits 0 or 1",
    )
    check.add_argument(
        "path",
        nargs="?",
        default="policies",
        help="a policies folder or one policy file (default: policies)",
    )
    check.set_defaults(handler=_policy_check)

    cache_commands = _command_group(commands, "cache", "work with the response cache")
    cache_import = cache_commands.add_parser(
        "import",
        help="warm the cache from JSONL of recorded (request, response) pairs, through the "
        "same classifier, keys and policies as live traffic; prints what was stored and "
        "what was refused and why",
    )
    cache_import.add_argument("file", help="JSONL file, one recorded pair per line")
    cache_import.add_argument(
        "--config", help="config file (default: $GATEWAY_CONFIG or config/gateway.yaml)"
    )
    cache_import.add_argument(
        "--tenant", help="the tenant the entries belong to (required when tenants are configured)"
    )
    cache_import.add_argument(
        "--namespace", help="store under this cache namespace (as x-gateway-namespace does)"
    )
    cache_import.add_argument(
        "--include-user-records",
        action="store_true",
        help="also import records whose body names a user while the policy injects memory "
        "(only for logs whose answers were written without the gateway's memory)",
    )
    cache_import.add_argument(
        "--seed-adaptive",
        action="store_true",
        help="judge each record against its nearest earlier one (local judge, the two "
        "recorded answers) and add the verdicts to the tenant's adaptive statistics",
    )
    cache_import.add_argument("--output", help="also write the summary as JSON to this path")
    cache_import.add_argument(
        "--progress",
        action="store_true",
        help="progress lines on stderr even when it is not a terminal",
    )
    cache_import.set_defaults(handler=_cache_import)

    memory_commands = _command_group(commands, "memory", "work with long-term memory")
    cleanup = memory_commands.add_parser(
        "cleanup",
        help="apply the memory retention policies now, through a running gateway's "
        "POST /admin/memories/cleanup (admin key from $GATEWAY_ADMIN_KEY); prints "
        "how many memories went",
    )
    cleanup.add_argument(
        "--url", default="http://127.0.0.1:8080", help="the gateway (default %(default)s)"
    )
    cleanup.add_argument("--tenant", help="only this tenant (default: every tenant)")
    cleanup.add_argument("--user", help="only this user of --tenant")
    cleanup.set_defaults(handler=_memory_cleanup)

    key_commands = _command_group(commands, "key", "work with API keys")
    hash_key = key_commands.add_parser(
        "hash",
        help="read an API key from stdin, print its config entry 'sha256:<hex>'",
    )
    hash_key.set_defaults(handler=_key_hash)
    return parser


def _command_group(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help_text: str
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """`gateway <name> <subcommand>`: the group's parser, holding its subcommands (which
    `args.<name>_command` names)."""
    group = commands.add_parser(name, help=help_text)
    return group.add_subparsers(dest=f"{name}_command", required=True)


def _add_adaptive_arguments(evaluate: argparse.ArgumentParser) -> None:
    from gateway_tools.evaluation.adaptive_sim import DEFAULT_MIN_STREAM

    adaptive = evaluate.add_argument_group("adaptive (gateway eval adaptive)")
    adaptive.add_argument(
        "--judge-errors",
        default="0,0.02",
        help="judge error rates to replay with, comma-separated: the share of verdicts "
        "flipped, in either direction (default 0,0.02)",
    )
    adaptive.add_argument(
        "--floor", type=float, default=0.80, help="lowest threshold, calibrated (default 0.80)"
    )
    adaptive.add_argument(
        "--static-threshold",
        type=float,
        default=0.97,
        help="the static default: the policy's accept threshold (default 0.97)",
    )
    adaptive.add_argument(
        "--shadow-rate",
        type=float,
        default=1.0,
        help="share of checked misses in [floor, threshold) judged (default 1.0)",
    )
    adaptive.add_argument(
        "--audit-rate", type=float, default=0.05, help="share of served hits judged (default 0.05)"
    )
    adaptive.add_argument(
        "--uncorrected-judge",
        action="store_true",
        help="count verdicts as they are, not corrected for the judge's known error rates",
    )
    adaptive.add_argument(
        "--per-language",
        action="store_true",
        help="one statistics scope per language of the request (default: one per stream)",
    )
    adaptive.add_argument("--seed", type=int, default=16, help="stream order seed (default 16)")
    adaptive.add_argument(
        "--min-stream",
        type=int,
        default=DEFAULT_MIN_STREAM,
        help="replay a smaller set until the stream has this many pairs "
        f"(default {DEFAULT_MIN_STREAM})",
    )
    adaptive.add_argument("--plot-dir", help="write a PNG per set into this folder")
    adaptive.add_argument(
        "--signals-cache",
        help="keep per-pair signals (similarity, checks) in this folder across runs",
    )
    adaptive.add_argument(
        "--probe-dir", default="tests/probes", help="the probe suite (default tests/probes)"
    )


def _key_hash(args: argparse.Namespace) -> int:
    """Reads the key from stdin (never argv: argv shows in `ps` and shell history)."""
    from gateway.auth import hashed_key

    key = sys.stdin.readline().rstrip("\r\n")
    if len(key) < 8:
        print("gateway: give the key (at least 8 characters) on stdin", file=sys.stderr)
        return 2
    print(hashed_key(key))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
