"""`gateway eval`: run the decision pipeline over labeled data and print the results.

gateway eval pairs --data ../shared/data [--sets qqp,lcqmc,...] [--limit N]
gateway eval classifier --data ../shared/data
gateway eval probes
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gateway.components import load_guard, load_local_embedder, load_text_components
from gateway.evaluation.followup_reuse import evaluate_followup_reuse
from gateway.evaluation.pairs import evaluate_pair_protocol, evaluate_pool_protocol, load_pairs
from gateway.evaluation.probes import evaluate_probes
from gateway.policy.models import SemanticCachePolicy
from gateway.review.local import LocalPairReviewer

DEFAULT_SETS = ("qqp", "lcqmc", "paws_en", "pawsx_zh")


def _print_pair_result(name: str, result: dict[str, Any]) -> None:
    pipeline = result["pipeline"]
    print(
        f"\n### {name} ({result['protocol']} protocol, {pipeline['pairs']} pairs"
        + (f", pool {result['pool_size']}" if "pool_size" in result else "")
        + ")"
    )
    per = pipeline["false_hit_rate_per"]
    print(f"| rule | hit rate | precision | recall | false hits per {per} (95% CI) |")
    print("|---|---:|---:|---:|---|")

    def row(label: str, tally: dict[str, Any]) -> None:
        low, high = tally["false_hit_rate_ci95"]
        print(
            f"| {label} | {tally['hit_rate']:.3f} | {tally['precision']:.3f} | "
            f"{tally['recall']:.3f} | {tally['false_hit_rate']:.3f} "
            f"[{low:.3f}, {high:.3f}] |"
        )

    row("gateway pipeline", pipeline)
    for threshold, tally in result["baseline_cosine"].items():
        row(f"cosine >= {threshold}", tally)
    print(f"rejected by: {pipeline['rejected_by']}")
    if "pool_size" in result:
        print(
            f"served another stored entry with the query's own text (counted false above): "
            f"{pipeline['same_text_hits']}; precision counting those correct: "
            f"{pipeline['precision_same_text_correct']:.3f} (cosine >= 0.90: "
            f"{result['baseline_cosine']['0.90']['precision_same_text_correct']:.3f})"
        )
    best = result.get("best_baseline_at_pipeline_precision")
    if best:
        print(
            f"best plain cosine threshold at precision >= {best['precision_target']:.3f}: "
            f"recall {best['recall']:.3f} (raw cosine {best['raw_cosine_threshold']}); "
            f"AUC {result['auc']}"
        )


async def eval_pairs(
    data_dir: Path,
    sets: Sequence[str],
    limit: int | None,
    protocols: Sequence[str],
    half: str | None = None,
    reviewer_weights: Path | None = None,
) -> dict[str, Any]:
    _, comparator = await load_text_components()
    embedder = await load_local_embedder()
    reviewer = LocalPairReviewer.load(reviewer_weights)
    # Other weights serve as the structure guard too, as the packaged ones do.
    guard = reviewer if reviewer_weights is not None else load_guard()
    policy = SemanticCachePolicy()
    results: dict[str, Any] = {
        "embedder": embedder.name,
        "reviewer": str(reviewer_weights) if reviewer_weights else reviewer.name,
        "half": half,
    }
    if half or reviewer_weights:
        print(f"half: {half or 'all'}; reviewer weights: {results['reviewer']}")
    for name in sets:
        pairs = load_pairs(data_dir, name, limit, half)
        for protocol in protocols:
            evaluate = evaluate_pair_protocol if protocol == "pair" else evaluate_pool_protocol
            result = await evaluate(pairs, embedder, comparator, reviewer, policy, guard)
            results[f"{name}/{protocol}"] = result
            _print_pair_result(name, result)
    return results


async def eval_classifier(data_dir: Path) -> dict[str, Any]:
    from gateway.evaluation import classifier_sets

    classifier, comparator = await load_text_components()
    results: dict[str, Any] = {}
    for name, evaluate in (
        ("time_sensitivity", classifier_sets.eval_time_sensitivity),
        ("write_intents", classifier_sets.eval_write_intents),
        ("followups", classifier_sets.eval_followups),
    ):
        outcome = evaluate(data_dir, classifier)
        results[name] = outcome
        print(f"{name}: {outcome}")
    reuse = await evaluate_followup_reuse(
        data_dir, await load_local_embedder(), comparator, LocalPairReviewer.load(), load_guard()
    )
    results["followup_reuse"] = reuse
    print(f"followup_reuse: {reuse}")
    return results


async def eval_probes() -> dict[str, Any]:
    _, comparator = await load_text_components()
    embedder = await load_local_embedder()
    result = await evaluate_probes(
        embedder, comparator, LocalPairReviewer.load(), SemanticCachePolicy(), load_guard()
    )
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return result


def run_eval(
    command: str,
    data_dir: Path | None,
    sets: Sequence[str],
    limit: int | None,
    protocols: Sequence[str],
    output: str | None,
    half: str | None = None,
    reviewer_weights: Path | None = None,
) -> int:
    if command in ("pairs", "classifier") and (data_dir is None or not data_dir.is_dir()):
        print(f"gateway eval {command}: --data must name the shared data folder")
        return 2
    if command == "pairs":
        assert data_dir is not None
        results = asyncio.run(eval_pairs(data_dir, sets, limit, protocols, half, reviewer_weights))
    elif command == "classifier":
        assert data_dir is not None
        results = asyncio.run(eval_classifier(data_dir))
    else:
        results = asyncio.run(eval_probes())
    if output:
        Path(output).write_text(json.dumps(results, indent=2, default=str, ensure_ascii=False))
    return 0
