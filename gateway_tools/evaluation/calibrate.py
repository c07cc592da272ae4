"""Fit an embedder's calibration (raw cosine -> gateway similarity scale) on labelled pairs.

    python -m gateway_tools.evaluation.calibrate --data ../shared/data \\
        --embedder use-multilingual-v3 \\
        --out gateway/embed/calibrations/use-multilingual-v3.json

    python -m gateway_tools.evaluation.calibrate --data ../shared/data \\
        --embedder litellm:text-embedding-3-small --config gateway.yaml --out my-cal.json

`gateway calibrate --data ../shared/data --config gateway.yaml --out my-cal.json` runs
the second for the config's `semantic.embedder` (a `model_list` name); the gateway loads
the file from `semantic.calibration`.

What is fitted (see `gateway.embed.calibration`): per language of the ask, the precision
of serving every pair whose raw cosine is at least t, among the pairs that reach the
threshold in the gateway: the ones `judge_candidate` lets through its entity comparison
and structure guard. Only half "a" of each set is used (`gateway_tools.evaluation.pairs.in_half`,
split by first sentence), so `gateway eval pairs --half b` measures the shipped scale on
pairs it never saw.

Data: the question-pair dev sets of each language, each set with equal weight within its
language: English QQP validation and MRPC train, Chinese LCQMC dev, BQ dev and AFQMC
train (see the data README). PAWS and PAWS-X are not fitted on: they are adversarial by
construction (word swaps at near-identical cosine) and measure the structure guard. The
all-language curve (for callers that name no language) weighs both languages equally.
These sets are non-commercial / research-only: the command writes only the fitted knots
and summary numbers (pair counts, AUC, ceilings, crossings), never any text.

The structure guard is given the raw cosine as its similarity feature, so the fit never
depends on the file it writes; the local pair model's similarity steps (at 0.33 and 0.78)
see no difference above raw ~0.8, below anything a target precision serves.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gateway.embed.calibration import METHODS, Calibration, Method
from gateway.embed.calibration_fit import fit_calibration, roc_auc
from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.pipeline.judge import StructureGuard, judge_candidate
from gateway.policy.models import SemanticCachePolicy
from gateway_tools.evaluation.pairs import LabeledPair, load_pairs

# Target precisions reported in the file and the README table.
POLICY_LEVELS = (0.90, 0.93, 0.95, 0.97, 0.99)
LANGUAGE_SETS: dict[str, tuple[str, ...]] = {
    "en": ("qqp", "mrpc"),
    "zh": ("lcqmc", "bq", "afqmc"),
}
FIT_HALF = "a"
# A policy under which `judge_candidate` accepts whatever passes its checks: what reaches
# a threshold.
_CHECKS_ONLY = SemanticCachePolicy(accept_threshold=1e-6, review_min_similarity=1e-6)

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ScoredSet:
    name: str
    language: str
    cosine: FloatArray  # every pair of the half
    labels: FloatArray
    passed: npt.NDArray[np.bool_]  # reached the threshold: entity comparison and guard

    def weights(self) -> FloatArray:
        """The set's pairs that passed, each 1/len(set): every set weighs the same."""
        return np.full(int(self.passed.sum()), 1.0 / max(len(self.cosine), 1))


async def score_pairs(
    embedder: Embedder, pairs: Sequence[LabeledPair], batch_size: int
) -> FloatArray:
    """Raw cosine of each pair (both sides embedded in batches)."""
    cosines: list[npt.NDArray[np.float32]] = []
    for start in range(0, len(pairs), batch_size):
        batch = pairs[start : start + batch_size]
        left = await embedder.embed([p.first for p in batch])
        right = await embedder.embed([p.second for p in batch])
        cosines.append(np.einsum("ij,ij->i", left, right))
    return np.concatenate(cosines).astype(np.float64) if cosines else np.zeros(0)


async def passed_checks(
    pairs: Sequence[LabeledPair],
    cosine: FloatArray,
    comparator: EntityComparator,
    guard: StructureGuard | None,
) -> npt.NDArray[np.bool_]:
    """Which pairs `judge_candidate` lets through its entity comparison and guard (the
    second sentence asks, the first is stored, as in `gateway eval pairs`)."""
    passed = np.zeros(len(pairs), dtype=bool)
    for i, (pair, cos) in enumerate(zip(pairs, cosine.tolist(), strict=True)):
        decision = await judge_candidate(
            pair.second, pair.first, max(cos, 1e-6), _CHECKS_ONLY, comparator, None, guard
        )
        passed[i] = decision.accepted
    return passed


def build_embedder(name: str, config_path: str | None) -> Embedder:
    if name == "use-multilingual-v3":
        from gateway.embed.local_use import UniversalSentenceEncoder

        # Fitting must start from raw cosines: the packaged calibration is not used.
        return UniversalSentenceEncoder.load(calibration=Calibration.identity(name))
    if name.startswith("litellm:"):
        from gateway.embed.litellm_embedder import LiteLLMEmbedder
        from gateway.providers.litellm_provider import LiteLLMProvider
        from gateway.settings import config_path_from, load_config

        config, _ = load_config(config_path_from(config_path))
        model = name.removeprefix("litellm:")
        return LiteLLMEmbedder(LiteLLMProvider.create(config), model)
    raise SystemExit(f"unknown embedder {name!r}: use-multilingual-v3 or litellm:<model>")


def fit_languages(
    scored: Sequence[ScoredSet], method: Method, embedder: str, max_knots: int
) -> Calibration:
    """One curve per language (its sets equally weighted) and the all-language curve
    (each language equally weighted); `fitted_on` holds the per-set summaries."""
    languages: dict[str, Calibration] = {}
    pooled: list[tuple[FloatArray, FloatArray, FloatArray]] = []
    for language in sorted({s.language for s in scored}):
        mine = [s for s in scored if s.language == language]
        cosine = np.concatenate([s.cosine[s.passed] for s in mine])
        labels = np.concatenate([s.labels[s.passed] for s in mine])
        weights = np.concatenate([s.weights() for s in mine]) / len(mine)
        curve = fit_calibration(
            cosine, labels, weights, method=method, embedder=embedder, max_knots=max_knots
        )
        info = dict(curve.fitted_on)
        info["sets"] = [s.name for s in mine]
        info["raw_at"] = _raw_at(curve)
        languages[language] = Calibration(
            raw=curve.raw,
            calibrated=curve.calibrated,
            embedder=embedder,
            method=method,
            fitted_on=info,
        )
        pooled.append((cosine, labels, weights))
    share = 1.0 / len(pooled)
    everything = fit_calibration(
        np.concatenate([c for c, _, _ in pooled]),
        np.concatenate([lab for _, lab, _ in pooled]),
        np.concatenate([w * share for _, _, w in pooled]),
        method=method,
        embedder=embedder,
        max_knots=max_knots,
    )
    per_set: dict[str, Any] = {}
    for s in scored:
        threshold = languages[s.language].raw_threshold(0.97)
        per_set[s.name] = {
            "language": s.language,
            "half": FIT_HALF,
            "pairs": len(s.cosine),
            "passed_checks": int(s.passed.sum()),
            "duplicate_rate": round(float(s.labels.mean()), 4),
            "auc_of_cosine_after_checks": round(
                float(roc_auc(s.cosine[s.passed], s.labels[s.passed])), 4
            ),
            "at_0.97": _precision_recall(s, threshold),
        }
    info = dict(everything.fitted_on)
    info.update(
        {
            "sets": per_set,
            "weighting": "each set equally within its language; languages equally",
            "checks": "entity comparison and structure guard (judge_candidate)",
            "raw_at": _raw_at(everything),
        }
    )
    return Calibration(
        raw=everything.raw,
        calibrated=everything.calibrated,
        embedder=embedder,
        method=method,
        fitted_on=info,
        languages=languages,
    )


def _raw_at(curve: Calibration) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for level in POLICY_LEVELS:
        raw = curve.raw_threshold(level)
        out[f"{level:g}"] = None if raw is None else round(raw, 4)
    return out


def _precision_recall(s: ScoredSet, threshold: float | None) -> dict[str, float | None]:
    if threshold is None:
        return {"precision": None, "recall": 0.0}
    served = s.passed & (s.cosine >= threshold)
    positives = float(s.labels.sum())
    hits = float(s.labels[served].sum())
    return {
        "precision": round(hits / float(served.sum()), 4) if served.any() else None,
        "recall": round(hits / positives, 4) if positives else 0.0,
    }


async def calibrate(args: argparse.Namespace) -> Calibration:
    name, scored = await score_sets(args.data, args.embedder, args.config, args.batch_size)
    return fit_languages(scored, args.method, name, args.knots)


async def score_sets(
    data: Path, embedder_name: str, config: str | None, batch_size: int
) -> tuple[str, list[ScoredSet]]:
    """Half "a" of every set: raw cosines, labels, and which pairs pass the checks
    (with the embedder's name)."""
    from gateway.components import load_guard, load_text_components

    embedder = build_embedder(embedder_name, config)
    await embedder.warm_up()
    _, comparator = await load_text_components()
    guard = load_guard()
    scored: list[ScoredSet] = []
    for language, names in LANGUAGE_SETS.items():
        for name in names:
            pairs = load_pairs(data, name, half=FIT_HALF)
            started = time.perf_counter()
            cosine = await score_pairs(embedder, pairs, batch_size)
            passed = await passed_checks(pairs, cosine, comparator, guard)
            labels = np.array([p.duplicate for p in pairs], dtype=np.float64)
            scored.append(ScoredSet(name, language, cosine, labels, passed))
            elapsed = time.perf_counter() - started
            print(f"{name}: {len(pairs)} pairs in {elapsed:.0f} s", file=sys.stderr)
    return embedder.name, scored


def report(calibration: Calibration) -> str:
    lines = [f"embedder {calibration.embedder}, method {calibration.method}"]
    for language, curve in sorted(calibration.languages.items()):
        info = curve.fitted_on
        crossing = ", ".join(
            f"{level}: {'never' if raw is None else f'{raw:.4f}'}"
            for level, raw in info.get("raw_at", {}).items()
        )
        lines.append(
            f"  {language} ({', '.join(info.get('sets', []))}): ceiling "
            f"{info.get('ceiling')} from raw {info.get('ceiling_from_raw')}; "
            f"raw cosine at {crossing}"
        )
    for name, s in calibration.fitted_on.get("sets", {}).items():
        at = s["at_0.97"]
        lines.append(
            f"  {name} ({s['language']}, half {s['half']}, {s['pairs']} pairs, "
            f"{s['passed_checks']} pass the checks, {s['duplicate_rate']:.0%} dup): AUC "
            f"{s['auc_of_cosine_after_checks']:.4f}; at 0.97 precision {at['precision']} "
            f"recall {at['recall']}"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gateway_tools.evaluation.calibrate",
        description="Fit an embedder's raw-cosine -> calibrated-similarity map.",
    )
    parser.add_argument("--data", type=Path, required=True, help="the shared data folder")
    parser.add_argument("--embedder", required=True, help="use-multilingual-v3 or litellm:<model>")
    parser.add_argument("--out", type=Path, required=True, help="calibration JSON to write")
    parser.add_argument("--config", help="gateway config (for litellm: embedders)")
    parser.add_argument(
        "--method", choices=[m for m in METHODS if m != "identity"], default="precision"
    )
    parser.add_argument("--knots", type=int, default=24, help="at most this many per curve")
    parser.add_argument("--batch-size", type=int, default=64)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    calibration = asyncio.run(calibrate(args))
    calibration.to_json(args.out)
    print(report(calibration))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
