"""Evaluate the shipped local reviewer on pair sets it was NOT trained on.

    python -m gateway_tools.training.evaluate_reviewer --data ../shared/data [--weights FILE]

QQP (English) and LCQMC (Chinese) are non-commercial / research-only: they are used
here to measure, never to fit. For each set: all pairs, the pairs whose calibrated
similarity lies in the review band (the ones the reviewer would see), and those above
it; the reviewer's AUC next to the similarity's own, and at the shipped per-language
threshold the share of negatives accepted and of positives kept. Also the per-pair
latency of `LocalPairReviewer.decide` (features + model, no embedding).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from gateway.review.local import LocalPairReviewer, LocalPairWeights
from gateway_tools.training.train_reviewer import (
    LabelledPair,
    embed_pairs,
    load_similarity_scale,
    roc_auc,
)


def read_qqp(path: Path) -> list[LabelledPair]:
    pairs: list[LabelledPair] = []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row.get("is_duplicate") in ("0", "1") and row["question1"] and row["question2"]:
                pairs.append(
                    LabelledPair(row["question1"], row["question2"], int(row["is_duplicate"]), "en")
                )
    return pairs


def read_lcqmc(path: Path) -> list[LabelledPair]:
    pairs: list[LabelledPair] = []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) >= 3 and row[2] in ("0", "1") and row[0] and row[1]:
                pairs.append(LabelledPair(row[0], row[1], int(row[2]), "zh"))
    return pairs


def evaluate_set(
    reviewer: LocalPairReviewer,
    pairs: Sequence[LabelledPair],
    similarities: np.ndarray[Any, np.dtype[np.float64]],
    band: tuple[float, float],
) -> dict[str, Any]:
    verdicts = [
        reviewer.decide(p.a, p.b, float(s)) for p, s in zip(pairs, similarities, strict=True)
    ]
    scores = np.array([v.score for v in verdicts])
    accepted = np.array([v.same_meaning for v in verdicts])
    labels = np.array([p.label for p in pairs], dtype=np.float64)
    subsets = {
        "all": np.ones(len(pairs), dtype=bool),
        "in_band": (similarities >= band[0]) & (similarities < band[1]),
        "above_band": similarities >= band[1],
    }
    report: dict[str, Any] = {}
    for name, mask in subsets.items():
        y = labels[mask]
        entry: dict[str, Any] = {"pairs": int(mask.sum()), "positives": int(y.sum())}
        if 0 < y.sum() < len(y):
            entry["auc"] = round(roc_auc(scores[mask], y), 4)
            entry["similarity_auc"] = round(roc_auc(similarities[mask], y), 4)
            # The verdicts themselves, so the per-language thresholds the reviewer
            # applied are what is measured.
            kept = accepted[mask]
            entry["false_accept_rate"] = round(float(kept[y == 0].mean()), 4)
            entry["positive_accept_rate"] = round(float(kept[y == 1].mean()), 4)
        report[name] = entry
    return report


def latency_us(reviewer: LocalPairReviewer, pairs: Sequence[LabelledPair], n: int = 2000) -> float:
    sample = list(pairs[:n])
    started = time.perf_counter()
    for p in sample:
        reviewer.decide(p.a, p.b, 0.88)
    return (time.perf_counter() - started) / max(len(sample), 1) * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gateway_tools.training.evaluate_reviewer",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--data", type=Path, required=True, help="shared data folder")
    parser.add_argument("--weights", type=Path, help="weights JSON (default: packaged)")
    parser.add_argument("--band", type=float, nargs=2, default=(0.85, 0.92))
    parser.add_argument("--threads", type=int, default=2, help="embedding BLAS threads")
    args = parser.parse_args(argv)

    weights = (
        LocalPairWeights.from_path(args.weights) if args.weights else LocalPairWeights.packaged()
    )
    reviewer = LocalPairReviewer(weights)
    scale, scale_name = load_similarity_scale()
    if scale_name != weights.similarity_scale:
        print(
            f"warning: weights fitted on {weights.similarity_scale} similarity, "
            f"evaluating on {scale_name}",
            file=sys.stderr,
        )
    band = (float(args.band[0]), float(args.band[1]))
    sets = {
        "qqp_val": read_qqp(args.data / "pairs_en" / "qqp_val.csv"),
        "lcqmc_dev": read_lcqmc(args.data / "pairs_zh" / "lcqmc_dev.txt"),
    }
    report: dict[str, Any] = {"similarity_scale": scale_name, "band": list(band)}
    for name, pairs in sets.items():
        print(f"{name}: {len(pairs)} pairs, embedding...", file=sys.stderr, flush=True)
        cosines = embed_pairs(pairs, threads=args.threads).cosines(pairs)
        similarities = np.array([scale(float(c)) for c in cosines])
        report[name] = evaluate_set(reviewer, pairs, similarities, band)
        report[name]["latency_us_per_pair"] = round(latency_us(reviewer, pairs), 1)
    print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
