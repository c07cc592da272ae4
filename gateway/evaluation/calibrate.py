"""Fit an embedder's calibration (raw cosine -> gateway similarity scale) on labelled pairs.

    python -m gateway.evaluation.calibrate --data ../shared/data \\
        --embedder use-multilingual-v3 \\
        --out gateway/embed/calibrations/use-multilingual-v3.json

    python -m gateway.evaluation.calibrate --data ../shared/data \\
        --embedder litellm:text-embedding-3-small --config gateway.yaml --out my-cal.json

Data: English QQP validation pairs and Chinese LCQMC dev pairs (see the data README),
optionally subsampled (`--pairs`), and weighted so each language counts equally. These sets are
non-commercial / research-only: the command writes only the fitted knots and summary
numbers (pair counts, AUC, crossings), never any text.

The scale and the choice between methods are explained in `gateway.embed.calibration`.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gateway.embed.calibration import (
    Calibration,
    crossings,
    fit_calibration,
    roc_auc,
)
from gateway.embed.protocol import Embedder

POLICY_LEVELS = (0.85, 0.92)

Pair = tuple[str, str, int]


def read_qqp(path: Path) -> list[Pair]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            (row["question1"], row["question2"], int(row["is_duplicate"]))
            for row in csv.DictReader(handle)
            if row.get("question1") and row.get("question2") and row.get("is_duplicate")
        ]


def read_lcqmc(path: Path) -> list[Pair]:
    pairs: list[Pair] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 3 and fields[2] in ("0", "1"):
                pairs.append((fields[0], fields[1], int(fields[2])))
    return pairs


@dataclass(frozen=True, slots=True)
class PairSet:
    name: str
    language: str
    relative_path: str
    reader: Callable[[Path], list[Pair]]


PAIR_SETS = (
    PairSet("qqp", "en", "pairs_en/qqp_val.csv", read_qqp),
    PairSet("lcqmc", "zh", "pairs_zh/lcqmc_dev.txt", read_lcqmc),
)


@dataclass(frozen=True, slots=True)
class ScoredSet:
    pair_set: PairSet
    cosine: npt.NDArray[np.float64]
    labels: npt.NDArray[np.float64]


def subsample(pairs: list[Pair], size: int, seed: int) -> list[Pair]:
    if size <= 0 or size >= len(pairs):
        return pairs
    chosen = np.random.default_rng(seed).choice(len(pairs), size=size, replace=False)
    return [pairs[i] for i in np.sort(chosen)]


async def score_pairs(
    embedder: Embedder, pairs: list[Pair], batch_size: int
) -> npt.NDArray[np.float64]:
    """Raw cosine of each pair (both sides embedded in batches)."""
    cosines: list[npt.NDArray[np.float32]] = []
    for start in range(0, len(pairs), batch_size):
        batch = pairs[start : start + batch_size]
        left = await embedder.embed([a for a, _, _ in batch])
        right = await embedder.embed([b for _, b, _ in batch])
        cosines.append(np.einsum("ij,ij->i", left, right))
    return np.concatenate(cosines).astype(np.float64)


def language_weights(scored: Sequence[ScoredSet]) -> npt.NDArray[np.float64]:
    """Each language carries the same total weight, split evenly over its pairs."""
    per_language: dict[str, int] = {}
    for s in scored:
        per_language[s.pair_set.language] = per_language.get(s.pair_set.language, 0) + len(s.cosine)
    parts = [
        np.full(len(s.cosine), 1.0 / (len(per_language) * per_language[s.pair_set.language]))
        for s in scored
    ]
    return np.concatenate(parts)


def precision_recall_at(scored: ScoredSet, threshold: float | None) -> tuple[float, float]:
    if threshold is None:
        return float("nan"), 0.0
    accepted = scored.cosine >= threshold
    positives = float(scored.labels.sum())
    hits = float(scored.labels[accepted].sum())
    precision = hits / accepted.sum() if accepted.any() else float("nan")
    return float(precision), hits / positives if positives else float("nan")


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


async def calibrate(args: argparse.Namespace) -> Calibration:
    embedder = build_embedder(args.embedder, args.config)
    await embedder.warm_up()
    scored: list[ScoredSet] = []
    for pair_set in PAIR_SETS:
        pairs = subsample(
            pair_set.reader(args.data / pair_set.relative_path), args.pairs, args.seed
        )
        started = time.perf_counter()
        cosine = await score_pairs(embedder, pairs, args.batch_size)
        labels = np.array([label for _, _, label in pairs], dtype=np.float64)
        scored.append(ScoredSet(pair_set, cosine, labels))
        elapsed = time.perf_counter() - started
        print(f"{pair_set.name}: embedded {len(pairs)} pairs in {elapsed:.1f} s", file=sys.stderr)

    cosine = np.concatenate([s.cosine for s in scored])
    labels = np.concatenate([s.labels for s in scored])
    weights = language_weights(scored)
    per_set: dict[str, Any] = {}
    for s in scored:
        alone = fit_calibration(s.cosine, s.labels, method=args.method)
        per_set[s.pair_set.name] = {
            "language": s.pair_set.language,
            "pairs": len(s.cosine),
            "duplicate_rate": round(float(s.labels.mean()), 4),
            "auc": round(roc_auc(s.cosine, s.labels), 4),
            "max_calibrated_alone": alone.calibrated[-1],
            "raw_at_alone": _rounded(crossings(alone, POLICY_LEVELS)),
        }
    fitted = fit_calibration(
        cosine, labels, weights, method=args.method, embedder=embedder.name, max_knots=args.knots
    )
    raw_at = crossings(fitted, POLICY_LEVELS)
    for s in scored:
        for level, threshold in raw_at.items():
            precision, recall = precision_recall_at(s, threshold)
            per_set[s.pair_set.name][f"at_{level}"] = {
                "precision": round(precision, 4),
                "recall": round(recall, 4),
            }
    return Calibration(
        raw=fitted.raw,
        calibrated=fitted.calibrated,
        embedder=fitted.embedder,
        method=fitted.method,
        fitted_on={
            "sets": per_set,
            "weighting": "equal per language",
            "seed": args.seed,
            "raw_at": _rounded(raw_at),
        },
    )


def _rounded(values: dict[str, float | None]) -> dict[str, float | None]:
    return {k: None if v is None else round(v, 4) for k, v in values.items()}


def report(calibration: Calibration) -> str:
    info = calibration.fitted_on
    lines = [f"embedder {calibration.embedder}, method {calibration.method}"]
    for level, raw in info["raw_at"].items():
        where = "never reached" if raw is None else f"raw cosine {raw:.4f}"
        lines.append(f"  calibrated {level}: {where}")
    for name, s in info["sets"].items():
        at = "; ".join(
            f"at {level}: precision {s[f'at_{level}']['precision']:.3f} "
            f"recall {s[f'at_{level}']['recall']:.3f}"
            for level in info["raw_at"]
        )
        lines.append(
            f"  {name} ({s['language']}, {s['pairs']} pairs, {s['duplicate_rate']:.0%} dup): "
            f"AUC {s['auc']:.4f}; {at}; fitted alone: max {s['max_calibrated_alone']:.3f}, "
            f"raw at {s['raw_at_alone']}"
        )
    lines.append(
        "  knots: "
        + ", ".join(
            f"{x:.3f}->{y:.3f}"
            for x, y in zip(calibration.raw, calibration.calibrated, strict=True)
        )
    )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gateway.evaluation.calibrate",
        description="Fit an embedder's raw-cosine -> calibrated-similarity map.",
    )
    parser.add_argument("--data", type=Path, required=True, help="the shared data folder")
    parser.add_argument("--embedder", required=True, help="use-multilingual-v3 or litellm:<model>")
    parser.add_argument("--out", type=Path, required=True, help="calibration JSON to write")
    parser.add_argument("--config", help="gateway config (for litellm: embedders)")
    parser.add_argument("--method", choices=("isotonic", "threshold-precision"), default="isotonic")
    parser.add_argument(
        "--pairs", type=int, default=0, help="pairs per set, subsampled (default 0: all)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--knots", type=int, default=32)
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
