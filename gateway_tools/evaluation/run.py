"""`gateway eval`: run the decision pipeline over labeled data and print the results.

gateway eval pairs --data ../shared/data [--sets qqp,lcqmc,...] [--limit N] [--ablation]
                   [--reviewer-errors ACCEPT_DUP,ACCEPT_NONDUP]
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
from gateway.entities.entities import EntityComparator
from gateway.nlp import TextAnalyzer
from gateway.policy.models import Policy, SemanticCachePolicy
from gateway.review.local import LocalPairReviewer
from gateway_tools.evaluation.followup_reuse import evaluate_followup_reuse
from gateway_tools.evaluation.pairs import (
    ReviewerErrors,
    ablation_variants,
    evaluate_pair_protocol,
    evaluate_pool_protocol,
    load_pairs,
    with_review_band,
)
from gateway_tools.evaluation.probes import evaluate_probes
from gateway_tools.evaluation.structural import (
    DIFFERENCE_PROBES,
    PARAPHRASE_PROBES,
    evaluate_structural_probes,
)

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
    modelled = result.get("model_reviewer")
    if modelled:
        simulated = modelled["reviewer"]
        row(
            f"+ model reviewer (accepts {simulated['accept_dup']:g} of duplicates, "
            f"{simulated['accept_nondup']:g} of others)",
            modelled,
        )
    for threshold, tally in result["baseline_cosine"].items():
        row(f"cosine >= {threshold}", tally)
    print(f"rejected by: {pipeline['rejected_by']}")
    if modelled:
        low, high = modelled["review_band"]
        print(
            f"model reviewer: band [{low:.2f}, {high:.2f})"
            + ("" if modelled["band_active"] else " (empty)")
            + f", asked {modelled['reviewer']['asked']} times {modelled['reviewer']['answers']}; "
            f"rejected by: {modelled['rejected_by']}"
        )
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
    if result.get("ablation"):
        _print_ablation(name, result["ablation"])


def _print_ablation(name: str, rows: Sequence[dict[str, Any]]) -> None:
    print(f"\n#### {name}: ablation (pair protocol)")
    print(
        "| rule | hits | precision | recall | false hits per negative (95% CI) "
        "| best plain cosine recall at that precision |"
    )
    print("|---|---:|---:|---:|---|---:|")
    for row in rows:
        low, high = row["false_hit_rate_ci95"]
        best = row["best_baseline"]
        print(
            f"| {row['rule']} | {row['hits']} | {row['precision']:.3f} | {row['recall']:.3f} "
            f"| {row['false_hit_rate']:.3f} [{low:.3f}, {high:.3f}] "
            f"| {best['recall']:.3f} |"
        )


async def eval_pairs(
    data_dir: Path,
    sets: Sequence[str],
    limit: int | None,
    protocols: Sequence[str],
    half: str | None = None,
    reviewer_weights: Path | None = None,
    ablation: bool = False,
    target_precision: float | None = None,
    reviewer_errors: ReviewerErrors | None = None,
) -> dict[str, Any]:
    comparator = await _eval_comparator()
    embedder = await load_local_embedder()
    reviewer = LocalPairReviewer.load(reviewer_weights)
    # Other weights serve as the structure guard too, as the packaged ones do.
    guard = reviewer if reviewer_weights is not None else load_guard()
    policy = _policy(target_precision)
    if reviewer_errors is not None:
        # The simulated chat-model reviewer is sent [review.band_floor, threshold).
        policy = with_review_band(policy)
    variants = ablation_variants(policy) if ablation else None
    results: dict[str, Any] = {
        "embedder": embedder.name,
        "reviewer": str(reviewer_weights) if reviewer_weights else reviewer.name,
        "half": half,
        "target_precision": policy.target_precision,
        "reviewer_errors": list(reviewer_errors) if reviewer_errors is not None else None,
    }
    if half or reviewer_weights:
        print(f"half: {half or 'all'}; reviewer weights: {results['reviewer']}")
    for name in sets:
        pairs = load_pairs(data_dir, name, limit, half)
        for protocol in protocols:
            if protocol == "pair":
                result = await evaluate_pair_protocol(
                    pairs, embedder, comparator, reviewer, policy, guard, variants, reviewer_errors
                )
            else:
                result = await evaluate_pool_protocol(
                    pairs, embedder, comparator, reviewer, policy, guard, reviewer_errors
                )
            results[f"{name}/{protocol}"] = result
            _print_pair_result(name, result)
    return results


async def _eval_comparator() -> EntityComparator:
    """The entity comparator with a memo large enough for a whole pair set: an ablation
    compares every pair once per rule, and the slots of a text are read once."""
    analyzer = await asyncio.to_thread(TextAnalyzer.load)
    return EntityComparator(analyzer, memo_size=1 << 17)


def _policy(target_precision: float | None) -> SemanticCachePolicy:
    if target_precision is None:
        return SemanticCachePolicy()
    return SemanticCachePolicy(target_precision=target_precision)


async def eval_classifier(data_dir: Path) -> dict[str, Any]:
    from gateway_tools.evaluation import classifier_sets

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


async def eval_probes(target_precision: float | None = None) -> dict[str, Any]:
    _, comparator = await load_text_components()
    embedder = await load_local_embedder()
    semantic_policy = _policy(target_precision)
    reviewer, guard = LocalPairReviewer.load(), load_guard()
    result = await evaluate_probes(embedder, comparator, reviewer, semantic_policy, guard)
    # Material, code, tables and attachments, through the real semantic stage.
    result["structural"] = await evaluate_structural_probes(
        embedder, comparator, reviewer, guard, Policy(semantic_cache=semantic_policy)
    )
    # Plain whole turns through the same path: one-slot near misses and paraphrases.
    for name, path in (
        ("difference", DIFFERENCE_PROBES),
        ("natural_paraphrases", PARAPHRASE_PROBES),
    ):
        result[name] = await evaluate_structural_probes(
            embedder,
            comparator,
            reviewer,
            guard,
            Policy(semantic_cache=semantic_policy),
            path=path,
            max_examples=100,
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
    ablation: bool = False,
    target_precision: float | None = None,
    reviewer_errors: ReviewerErrors | None = None,
) -> int:
    if command in ("pairs", "classifier") and (data_dir is None or not data_dir.is_dir()):
        print(f"gateway eval {command}: --data must name the shared data folder")
        return 2
    if command == "pairs":
        assert data_dir is not None
        results = asyncio.run(
            eval_pairs(
                data_dir,
                sets,
                limit,
                protocols,
                half,
                reviewer_weights,
                ablation,
                target_precision,
                reviewer_errors,
            )
        )
    elif command == "classifier":
        assert data_dir is not None
        results = asyncio.run(eval_classifier(data_dir))
    else:
        results = asyncio.run(eval_probes(target_precision))
    if output:
        Path(output).write_text(json.dumps(results, indent=2, default=str, ensure_ascii=False))
    return 0
