"""`gateway eval adaptive`: replay labelled pair sets as traffic through the adaptive
operating point and print what it served, next to the static default and the best
static threshold chosen in hindsight: at the target (the lowest static threshold whose
served precision on the stream reaches it), and at the precision the adaptive run got.

gateway eval adaptive --data ../shared/data [--sets lcqmc,qqp,...] [--limit N]
    [--judge-errors 0,0.02] [--plot-dir DIR] [--signals-cache DIR]
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gateway.policy.models import SemanticCachePolicy
from gateway_tools.evaluation.adaptive_signals import (
    probe_pairs,
    read_cached_signals,
    signals_cache_key,
    stream_signals,
    write_cached_signals,
)
from gateway_tools.evaluation.adaptive_sim import (
    SimulationRun,
    SimulationSettings,
    StaticPoint,
    StreamPair,
    best_static,
    build_stream,
    simulate,
    static_curve,
)
from gateway_tools.evaluation.pairs import PAIR_SETS, load_pairs
from gateway_tools.evaluation.probes import DEFAULT_PROBE_DIR

PROBES = "probes"
ADAPTIVE_SETS = ("lcqmc", "qqp", "bq", "afqmc", "paws_en", "pawsx_zh", PROBES)
# QQP's labels cap its precision (README, "Measuring the caching decisions"): among its
# near-identical pairs only 93 % are labelled duplicates.
SET_TARGETS = {"qqp": 0.92}
# The done-when bars (issue 36): precision >= target - 0.01 with an error-free judge
# (- 0.02 with errors), and recall >= 90 % of the best static threshold's at the target
# (the lowest static threshold whose served precision on the stream reaches the target,
# chosen in hindsight), on every set where one reaches it.
PRECISION_SLACK_EXACT_JUDGE = 0.01
PRECISION_SLACK_NOISY_JUDGE = 0.02
RECALL_SHARE_OF_BEST_AT_TARGET = 0.9
# A threshold serving fewer pairs than this says little about its precision.
MIN_SERVED_FOR_PRECISION = 30


async def load_streams(
    data_dir: Path | None,
    sets: Sequence[str],
    limit: int | None,
    half: str | None,
    cache_dir: Path | None,
    probe_dir: Path = DEFAULT_PROBE_DIR,
) -> dict[str, list[StreamPair]]:
    """Each set's per-pair signals, from `cache_dir` when computed before. With `half`,
    the pairs of that half (`pairs.in_half`) of the (limited) set."""
    from gateway.components import load_guard, load_local_embedder
    from gateway_tools.evaluation.run import _eval_comparator

    policy = SemanticCachePolicy()
    loaded: dict[str, Any] = {}
    streams: dict[str, list[StreamPair]] = {}
    for name in sets:
        if name == PROBES:
            pairs = probe_pairs(probe_dir)
            source: Path | None = None
        else:
            if data_dir is None:
                raise ValueError(f"set {name} needs --data")
            pairs = load_pairs(data_dir, name, limit)
            source = data_dir / PAIR_SETS[name][0]
        key = signals_cache_key(
            name,
            source,
            "use-multilingual-v3",
            policy.model_dump_json(),
            None if name == PROBES else limit,
            len(pairs),
        )
        cached = read_cached_signals(cache_dir / key) if cache_dir is not None else None
        if cached is not None and len(cached) == len(pairs):
            streams[name] = _half(cached, half)
            continue
        if not loaded:
            embedder = await load_local_embedder()
            loaded["parts"] = (embedder, await _eval_comparator(), load_guard())
        embedder, comparator, guard = loaded["parts"]
        print(f"{name}: embedding and checking {len(pairs)} pairs", file=sys.stderr, flush=True)
        signals = await stream_signals(pairs, embedder, comparator, guard, policy)
        if cache_dir is not None:
            write_cached_signals(cache_dir / key, signals)
        streams[name] = _half(signals, half)
    return streams


def most_precise_static(curve: Sequence[StaticPoint]) -> StaticPoint | None:
    """The most precise static threshold that serves enough to be measured: where no
    threshold reaches the target, this is how close any threshold gets."""
    measured = [p for p in curve if p.served >= MIN_SERVED_FOR_PRECISION]
    return max(measured, key=lambda p: (p.precision, p.recall), default=None)


def _half(signals: list[StreamPair], half: str | None) -> list[StreamPair]:
    return signals if half is None else [s for s in signals if s.half == half]


def _static_row(point: StaticPoint | None) -> dict[str, Any] | None:
    if point is None:
        return None
    return {
        "threshold": point.threshold,
        "served": point.served,
        "precision": round(point.precision, 4),
        "recall": round(point.recall, 4),
    }


def evaluate_set(
    name: str,
    pairs: Sequence[StreamPair],
    settings: SimulationSettings,
    judge_errors: Sequence[float],
    min_stream: int,
) -> tuple[dict[str, Any], dict[float, SimulationRun]]:
    """The set as one seeded stream, replayed once per judge error rate."""
    stream = build_stream(pairs, settings.seed, min_stream)
    curve = static_curve(stream)
    target = settings.target_precision
    at_target = best_static(curve, target)
    # The same, among the thresholds the rule may serve at (floor to static default).
    reachable = [p for p in curve if settings.floor <= p.threshold <= settings.static_threshold]
    at_target_in_range = best_static(reachable, target)
    result: dict[str, Any] = {
        "pairs": len(pairs),
        "stream": len(stream),
        "passes": -(-len(stream) // len(pairs)) if pairs else 0,
        "duplicates": sum(p.duplicate for p in stream),
        "target_precision": target,
        "static_threshold": settings.static_threshold,
        "best_static_at_target": _static_row(at_target),
        "best_static_at_target_in_range": _static_row(at_target_in_range),
        "floor": settings.floor,
        "most_precise_static": _static_row(most_precise_static(curve)),
        "runs": [],
    }
    runs: dict[float, SimulationRun] = {}
    for judge_error in judge_errors:
        run = simulate(stream, dataclasses.replace(settings, judge_error=judge_error))
        runs[judge_error] = run
        precision = run.adaptive.precision()
        recall = run.recall(run.adaptive)
        hindsight = best_static(curve, precision)
        slack = PRECISION_SLACK_EXACT_JUDGE if judge_error == 0 else PRECISION_SLACK_NOISY_JUDGE
        share_at_target = _share(recall, at_target)
        result["runs"].append(
            {
                "judge_error": judge_error,
                "adaptive": {
                    "served": run.adaptive.served,
                    "precision": round(precision, 4),
                    "recall": round(recall, 4),
                    "final_thresholds": run.thresholds,
                    "shadow_judgments": run.shadow_judgments,
                    "audits": run.audits,
                    "wrong_verdicts": run.wrong_verdicts,
                },
                "static": {
                    "served": run.static.served,
                    "precision": round(run.static.precision(), 4),
                    "recall": round(run.recall(run.static), 4),
                },
                "best_static_at_adaptive_precision": _static_row(hindsight),
                "recall_share_of_hindsight": _rounded(_share(recall, hindsight)),
                "recall_share_of_best_at_target": _rounded(share_at_target),
                "recall_share_of_best_at_target_in_range": _rounded(
                    _share(recall, at_target_in_range)
                ),
                "precision_ok": precision >= target - slack - 1e-9,
                # No static threshold reaching the target: nothing to measure against.
                "recall_ok": (
                    None
                    if share_at_target is None
                    else share_at_target >= RECALL_SHARE_OF_BEST_AT_TARGET - 1e-9
                ),
                "timeline": [dataclasses.asdict(p) for p in run.timeline],
            }
        )
    return result, runs


def _static_cell(point: dict[str, Any] | None) -> str:
    if point is None:
        return "none"
    return f"{point['threshold']:.2f} / {point['precision']:.3f} / {point['recall']:.3f}"


def _share(recall: float, static: StaticPoint | None) -> float | None:
    """The adaptive run's recall as a share of a static threshold's."""
    return recall / static.recall if static is not None and static.recall > 0 else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def print_report(name: str, result: dict[str, Any]) -> None:
    at_target = result["best_static_at_target"]
    print(
        f"\n### {name}: {result['pairs']} pairs, stream {result['stream']} "
        f"({result['passes']} pass(es)), target {result['target_precision']:.2f}; "
        "best static threshold in hindsight at the target: "
        + (
            f"{at_target['threshold']:.2f} (precision {at_target['precision']:.3f}, "
            f"recall {at_target['recall']:.3f})"
            if at_target
            else "none reaches it"
        )
    )
    in_range = result["best_static_at_target_in_range"]
    if at_target is not None and in_range != at_target:
        print(
            f"(between the floor {result['floor']:.2f} and the static default "
            f"{result['static_threshold']:.2f}, where the rule may serve: "
            + (
                f"{in_range['threshold']:.2f}, precision {in_range['precision']:.3f}, "
                f"recall {in_range['recall']:.3f})"
                if in_range
                else "none reaches it)"
            )
        )
    most = result["most_precise_static"]
    if at_target is None and most is not None:
        print(
            f"(the most precise static threshold serving {MIN_SERVED_FOR_PRECISION} or more: "
            f"{most['threshold']:.2f}, precision {most['precision']:.3f}, recall "
            f"{most['recall']:.3f}: no threshold reaches the target on this set)"
        )
    print(
        "| judge error | adaptive precision | recall | recall / best static at target "
        "| final threshold | static precision | static recall "
        "| hindsight static at that precision: threshold / recall "
        "| recall share | verdicts (shadow + audit) |"
    )
    print("|---|--:|--:|--:|---|--:|--:|---|--:|--:|")
    for row in result["runs"]:
        adaptive, static = row["adaptive"], row["static"]
        hindsight = row["best_static_at_adaptive_precision"]
        thresholds = ", ".join(f"{v:.2f}" for _, v in sorted(adaptive["final_thresholds"].items()))
        hindsight_cell = (
            "-"
            if hindsight is None
            else f"{hindsight['threshold']:.2f} / {hindsight['recall']:.3f}"
        )
        print(
            f"| {row['judge_error']:.0%} | {adaptive['precision']:.3f}"
            f"{'' if row['precision_ok'] else ' (below bar)'} | {adaptive['recall']:.3f} "
            f"| {_share_at_target_cell(row)} "
            f"| {thresholds or '-'} | {static['precision']:.3f} | {static['recall']:.3f} "
            f"| {hindsight_cell} | {_share_cell(row['recall_share_of_hindsight'])} "
            f"| {adaptive['shadow_judgments']} + {adaptive['audits']} |"
        )


def _share_at_target_cell(row: dict[str, Any]) -> str:
    share = row["recall_share_of_best_at_target"]
    if share is None:
        return "-"
    return f"{share:.3f}{'' if row['recall_ok'] else ' (below bar)'}"


def _share_cell(share: float | None) -> str:
    return "-" if share is None else f"{share:.3f}"


def print_summary(results: dict[str, Any]) -> None:
    """One row per set and judge error: the issue's bars at a glance."""
    print(
        "\n### Summary: precision >= target - "
        f"{PRECISION_SLACK_EXACT_JUDGE} (- {PRECISION_SLACK_NOISY_JUDGE} with judge errors), "
        f"recall >= {RECALL_SHARE_OF_BEST_AT_TARGET:.0%} of the best static threshold's at "
        "the target"
    )
    print(
        "| set | target | judge error | best static at target: threshold / precision / recall "
        "| adaptive precision | adaptive recall | recall / best static "
        "| best static at target from floor to static default | recall / that "
        "| final threshold |"
    )
    print("|---|--:|--:|---|--:|--:|--:|---|--:|---|")
    for name, result in results["sets"].items():
        for row in result["runs"]:
            adaptive = row["adaptive"]
            thresholds = ", ".join(
                f"{v:.2f}" for _, v in sorted(adaptive["final_thresholds"].items())
            )
            print(
                f"| {name} | {result['target_precision']:.2f} | {row['judge_error']:.0%} "
                f"| {_static_cell(result['best_static_at_target'])} "
                f"| {adaptive['precision']:.3f}{'' if row['precision_ok'] else ' (below bar)'} "
                f"| {adaptive['recall']:.3f} | {_share_at_target_cell(row)} "
                f"| {_static_cell(result['best_static_at_target_in_range'])} "
                f"| {_share_cell(row['recall_share_of_best_at_target_in_range'])} "
                f"| {thresholds or '-'} |"
            )


def run_adaptive_eval(
    data_dir: Path | None,
    sets: Sequence[str],
    limit: int | None,
    half: str | None,
    settings: SimulationSettings,
    target_precision: float | None,
    judge_errors: Sequence[float],
    min_stream: int,
    output: str | None,
    plot_dir: Path | None,
    cache_dir: Path | None,
    probe_dir: Path = DEFAULT_PROBE_DIR,
) -> int:
    unknown = [name for name in sets if name != PROBES and name not in PAIR_SETS]
    if unknown:
        print(f"gateway eval adaptive: unknown set(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    if any(name != PROBES for name in sets) and (data_dir is None or not data_dir.is_dir()):
        print("gateway eval adaptive: --data must name the shared data folder", file=sys.stderr)
        return 2
    if plot_dir is not None:  # fail before the slow part, not after it
        from gateway_tools.evaluation.adaptive_plot import PlottingUnavailable, plot_runs

        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(
                "gateway eval adaptive: --plot-dir needs matplotlib: "
                "pip install 'llm-cache-gateway[eval]'",
                file=sys.stderr,
            )
            return 2
    streams = asyncio.run(load_streams(data_dir, sets, limit, half, cache_dir, probe_dir))
    results: dict[str, Any] = {
        "settings": dataclasses.asdict(settings),
        "judge_errors": list(judge_errors),
        "half": half,
        "min_stream": min_stream,
        "sets": {},
    }
    for name in sets:
        target = target_precision or SET_TARGETS.get(name, settings.target_precision)
        set_settings = dataclasses.replace(settings, target_precision=target)
        result, runs = evaluate_set(name, streams[name], set_settings, judge_errors, min_stream)
        results["sets"][name] = result
        print_report(name, result)
        if plot_dir is not None:
            try:
                path = plot_runs(
                    name,
                    runs,
                    set_settings.target_precision,
                    set_settings.static_threshold,
                    plot_dir / f"adaptive-{name}{'-' + half if half else ''}.png",
                )
            except PlottingUnavailable as exc:
                print(f"gateway eval adaptive: {exc}", file=sys.stderr)
                return 2
            print(f"plot: {path}")
    print_summary(results)
    if output:
        Path(output).write_text(json.dumps(results, indent=2, default=str))
    return 0
