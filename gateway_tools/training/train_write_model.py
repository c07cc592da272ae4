"""Fit the English write-intent model's weights.

    python -m gateway_tools.training.train_write_model --data ../shared/data \\
        --out gateway/classify/models/write-intent-en-v1.json

Training data (both licences allow shipping weights fitted on them):
- CLINC150 train (CC BY 3.0): utterances of `ACTION_INTENTS` are acts; those of the other
  in-scope intents and the out-of-scope utterances are not; `MIXED_INTENTS` are left out.
- SNIPS train (CC0): `SNIPS_ACTION_INTENTS` act, `SNIPS_OTHER_INTENTS` do not.
Acts phrased as questions about the act ("how do I order checks") are dropped: the model
never scores such turns (see `write_model`), so they would only teach it the wrong
thing. CLINC val and SNIPS validate are never read: `gateway eval classifier` measures
on them.

Logistic regression with an L2 penalty, fitted by full-batch Adam in numpy. The threshold
is the lowest on a grid at which rules-or-model, cross-validated over five folds of
CLINC train, flags at most `--max-false-positive` of the non-action utterances. Only
weights, the threshold and metrics are written, never data.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gateway.classify.messages import normalize
from gateway.classify.write_en import EnglishWriteRules
from gateway.classify.write_model import (
    MODEL_FORMAT,
    WriteIntentModel,
    opens_as_question_or_text_request,
    token_features,
    turn_tokens,
)
from gateway_tools.evaluation.classifier_sets import (
    ACTION_INTENTS,
    MIXED_INTENTS,
    SNIPS_ACTION_INTENTS,
    SNIPS_OTHER_INTENTS,
)

FloatArray = npt.NDArray[np.float64]
FOLDS = 5
MAX_TOKENS = 30
MIN_FEATURE_COUNT = 2  # a word or pair seen once says more about that utterance than acts
THRESHOLDS = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))  # 0.50 ... 0.95


@dataclass(frozen=True, slots=True)
class Utterance:
    text: str  # normalised, lower case
    acts: bool
    source: str  # "clinc" or "snips": only CLINC utterances are cross-validated


@dataclass(frozen=True, slots=True)
class FitParams:
    l2: float = 1e-4
    iterations: int = 400
    learning_rate: float = 0.1


def _lower(text: str) -> str:
    return normalize(text).lower()


def read_clinc(data_dir: Path) -> list[Utterance]:
    raw = json.loads((data_dir / "intents" / "clinc150_train_val.json").read_text(encoding="utf-8"))
    rows = [
        Utterance(_lower(text), intent in ACTION_INTENTS, "clinc")
        for text, intent in raw["train"]
        if intent not in MIXED_INTENTS
    ]
    rows += [Utterance(_lower(text), False, "clinc") for text, _ in raw.get("oos_train", [])]
    return rows


def read_snips(data_dir: Path) -> list[Utterance]:
    rows: list[Utterance] = []
    for intents, acts in ((SNIPS_ACTION_INTENTS, True), (SNIPS_OTHER_INTENTS, False)):
        for intent in intents:
            for path in sorted((data_dir / "intents" / "snips_2017" / intent).glob("train_*")):
                records = json.loads(path.read_text(encoding="utf-8", errors="replace"))
                for record in records[intent]:
                    text = "".join(part["text"] for part in record["data"])
                    rows.append(Utterance(_lower(text), acts, "snips"))
    return rows


def training_rows(rows: Sequence[Utterance]) -> list[Utterance]:
    return [r for r in rows if not (r.acts and opens_as_question_or_text_request(r.text))]


def fit(rows: Sequence[Utterance], params: FitParams) -> tuple[dict[str, float], float]:
    """Weights per feature and the bias of an L2-penalised logistic regression."""
    feature_sets = [token_features(turn_tokens(r.text)) for r in rows]
    counts = Counter(f for features in feature_sets for f in features)
    names = sorted(f for f, n in counts.items() if n >= MIN_FEATURE_COUNT)
    index = {name: i for i, name in enumerate(names)}
    columns = [[index[f] for f in features if f in index] for features in feature_sets]
    flat = np.array([c for row in columns for c in row], dtype=np.int64)
    row_of = np.repeat(np.arange(len(rows)), [len(row) for row in columns])
    labels = np.array([r.acts for r in rows], dtype=np.float64)
    weights: FloatArray = np.zeros(len(names))
    bias = 0.0
    moment: FloatArray = np.zeros(len(names))
    second: FloatArray = np.zeros(len(names))
    for step in range(1, params.iterations + 1):
        logits = np.bincount(row_of, weights=weights[flat], minlength=len(rows)) + bias
        residual = 1.0 / (1.0 + np.exp(-logits)) - labels
        summed = np.bincount(flat, weights=residual[row_of], minlength=len(names))
        gradient: FloatArray = summed.astype(np.float64) / len(rows) + params.l2 * weights
        moment = 0.9 * moment + 0.1 * gradient
        second = 0.999 * second + 0.001 * gradient * gradient
        corrected = (moment / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
        weights = weights - params.learning_rate * corrected
        bias -= params.learning_rate * float(residual.mean())
    return {name: float(w) for name, w in zip(names, weights, strict=True)}, bias


def _fold(text: str) -> int:
    return zlib.crc32(text.encode("utf-8")) % FOLDS


@dataclass(frozen=True, slots=True)
class Rates:
    recall: float
    false_positive_rate: float


def cross_validate(
    clinc: Sequence[Utterance], snips: Sequence[Utterance], params: FitParams
) -> dict[float, Rates]:
    """Rules-or-model on each held-out CLINC fold, per threshold; also "rules" alone as
    threshold 1.0 (the model never reaches it)."""
    rules = EnglishWriteRules()
    hits: dict[float, list[int]] = {t: [0, 0] for t in (*THRESHOLDS, 1.0)}
    positives = sum(r.acts for r in clinc)
    negatives = len(clinc) - positives
    for fold in range(FOLDS):
        held_out = [r for r in clinc if _fold(r.text) == fold]
        train = training_rows([r for r in clinc if _fold(r.text) != fold] + list(snips))
        weights, bias = fit(train, params)
        model = WriteIntentModel(weights, bias, THRESHOLDS[0], MAX_TOKENS)
        for row in held_out:
            # Rules first, as in the classifier; the model's score only where they pass.
            by_rules = rules.write(row.text) is not None
            score = None if by_rules or rules.rules_out_act(row.text) else model.score(row.text)
            for threshold in hits:
                flagged = by_rules or (score is not None and threshold < 1.0 and score >= threshold)
                hits[threshold][0 if row.acts else 1] += flagged
    return {t: Rates(tp / positives, fp / negatives) for t, (tp, fp) in sorted(hits.items())}


def choose_threshold(rates: dict[float, Rates], max_false_positive: float) -> float:
    for threshold in THRESHOLDS:
        if rates[threshold].false_positive_rate <= max_false_positive:
            return threshold
    raise SystemExit(f"no threshold keeps false positives under {max_false_positive}")


def build_document(
    weights: dict[str, float],
    bias: float,
    threshold: float,
    rates: dict[float, Rates],
    counts: dict[str, int],
    prune_below: float,
) -> dict[str, Any]:
    kept = {name: round(w, 4) for name, w in sorted(weights.items()) if abs(w) >= prune_below}
    return {
        "format": MODEL_FORMAT,
        "model": "write-intent-en-v1",
        "threshold": threshold,
        "max_tokens": MAX_TOKENS,
        "bias": round(bias, 4),
        "weights": kept,
        "provenance": {
            "data": {
                "CLINC150 train": "clinc/oos-eval, CC BY 3.0 (Larson et al., 2019)",
                "SNIPS train": "sonos/nlu-benchmark, CC0",
            },
            "utterances": counts,
            "fit": "logistic regression, L2, numpy (gateway_tools.training.train_write_model)",
        },
        "cross_validated_on_clinc_train": {
            "rules_only": _rates_dict(rates[1.0]),
            "rules_or_model": _rates_dict(rates[threshold]),
            "per_threshold": {str(t): _rates_dict(r) for t, r in rates.items() if t < 1.0},
        },
    }


def _rates_dict(rates: Rates) -> dict[str, float]:
    return {
        "recall": round(rates.recall, 4),
        "false_positive_rate": round(rates.false_positive_rate, 4),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gateway_tools.training.train_write_model",
        description=(__doc__ or "").split("\n\n")[0],
    )
    parser.add_argument("--data", type=Path, required=True, help="shared data folder")
    parser.add_argument("--out", type=Path, required=True, help="weights JSON to write")
    parser.add_argument("--max-false-positive", type=float, default=0.005)
    parser.add_argument("--prune-below", type=float, default=0.01)
    args = parser.parse_args(argv)

    params = FitParams()
    clinc, snips = read_clinc(args.data), read_snips(args.data)
    print(f"{len(clinc)} CLINC and {len(snips)} SNIPS utterances", file=sys.stderr)
    rates = cross_validate(clinc, snips, params)
    threshold = choose_threshold(rates, args.max_false_positive)
    rows = training_rows([*clinc, *snips])
    weights, bias = fit(rows, params)
    counts = {
        "clinc": len(clinc),
        "snips": len(snips),
        "trained_on": len(rows),
        "acts": sum(r.acts for r in rows),
    }
    document = build_document(weights, bias, threshold, rates, counts, args.prune_below)
    args.out.write_text(json.dumps(document, ensure_ascii=False, indent=0) + "\n")
    chosen = rates[threshold]
    print(
        f"threshold {threshold}: cross-validated recall {chosen.recall:.3f}, false positives "
        f"{chosen.false_positive_rate:.4f} (rules alone {rates[1.0].recall:.3f} / "
        f"{rates[1.0].false_positive_rate:.4f}); {len(document['weights'])} weights "
        f"-> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
