"""The offline default reviewer: a small pair classifier that ships with the project.

It judges what the entity/slot comparison before it cannot: meaning carried by word
order and roles ("flights from A to B" vs "B to A", "X hired Y" vs "Y hired X") and
different requests that share most of their words. Features are computed in pure Python
(`gateway.review.features`, well under a millisecond per pair) and scored by an additive
model of step functions (`gateway.review.model`) whose weights were fitted by
`python -m gateway_tools.training.train_reviewer` on PAWS / PAWS-X only (licensed for any purpose).

The decision threshold is per language (English and Chinese behave differently under
the same features) and was chosen so that few PAWS-style negatives are accepted: a false
accept serves a wrong answer, a false reject only costs a cache miss.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from gateway.bounded_lru import BoundedLRU
from gateway.nlp import detect_language
from gateway.review.analysed import AnalysedTexts
from gateway.review.features import FEATURE_NAMES, pair_features_of
from gateway.review.model import MODEL_FORMAT, AdditiveModel, ReviewerModelFormatError
from gateway.review.protocol import LOCAL, ReviewVerdict
from gateway.weights_file import WeightsFile

MODEL_NAME = "local-pair-v1"
WEIGHTS_PACKAGE = "gateway.review"
WEIGHTS_RESOURCE = f"models/{MODEL_NAME}.json"

logger = logging.getLogger(__name__)

# Pairs whose probability is kept (a few hundred bytes each).
_PAIR_MEMO_ENTRIES = 8192


@dataclass(frozen=True, slots=True)
class LocalPairWeights(WeightsFile):
    FORMAT_ERROR: ClassVar[type[ValueError]] = ReviewerModelFormatError
    PACKAGE: ClassVar[str] = WEIGHTS_PACKAGE
    RESOURCE: ClassVar[str] = WEIGHTS_RESOURCE

    model: AdditiveModel
    thresholds: Mapping[str, float]  # language ("en", "zh") -> minimum probability
    similarity_scale: str  # "calibrated" or "raw": what the similarity feature was fitted on

    def threshold(self, *languages: str) -> float:
        """The strictest threshold among these languages; unknown ones count as strictest."""
        known = [self.thresholds[lang] for lang in languages if lang in self.thresholds]
        if len(known) < len(languages) or not known:
            return max(self.thresholds.values())
        return max(known)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LocalPairWeights:
        if data.get("format") != MODEL_FORMAT:
            raise ReviewerModelFormatError(f"unsupported weights format {data.get('format')!r}")
        thresholds = data.get("thresholds")
        if not isinstance(thresholds, Mapping) or not thresholds:
            raise ReviewerModelFormatError("weights need a non-empty 'thresholds' object")
        try:
            parsed = {str(k): float(v) for k, v in thresholds.items()}
        except (TypeError, ValueError) as exc:
            raise ReviewerModelFormatError("thresholds must be numbers") from exc
        if not all(0.0 <= v <= 1.0 for v in parsed.values()):
            raise ReviewerModelFormatError("thresholds must be probabilities in [0, 1]")
        scale = data.get("similarity_scale")
        if scale not in ("calibrated", "raw"):
            raise ReviewerModelFormatError("'similarity_scale' must be 'calibrated' or 'raw'")
        return cls(AdditiveModel.from_dict(data, FEATURE_NAMES), parsed, scale)


class LocalPairReviewer:
    """`Reviewer` backed by the shipped pair classifier; construct once, share freely.

    After construction it holds only a memo of text analyses (`AnalysedTexts`; one
    thread at a time, the event loop): `review` is CPU-only and fast enough (~0.1-0.3
    ms) to run inline on the event loop without an executor hop.
    """

    def __init__(self, weights: LocalPairWeights | None = None) -> None:
        self.weights = weights if weights is not None else LocalPairWeights.packaged()
        self.name = MODEL_NAME
        self.kind = LOCAL  # in-process and free: never sent the band below the threshold
        # Each text's analysis, kept: a stored candidate meets many queries.
        self._texts = AnalysedTexts()
        # Each pair's probability: a question asked again in the same words meets the
        # same candidate at the same similarity; the features are pure functions of them.
        self._scores: BoundedLRU[tuple[str, str, float], float] = BoundedLRU(_PAIR_MEMO_ENTRIES)
        if self.weights.similarity_scale != "calibrated":
            # The caller passes calibrated similarity; weights fitted on raw cosine still
            # work (the steps are monotone) but their similarity cuts sit on another scale.
            logger.warning(
                "%s weights were fitted on raw cosine, not the calibrated scale; "
                "retrain with `python -m gateway_tools.training.train_reviewer`",
                self.name,
            )

    @classmethod
    def load(cls, path: Path | None = None) -> LocalPairReviewer:
        """The reviewer with the packaged weights, or with the weights file at `path`."""
        weights = LocalPairWeights.from_path(path) if path else LocalPairWeights.packaged()
        return cls(weights)

    def score(self, query: str, candidate: str, similarity: float) -> float:
        """Probability that the two requests mean the same thing (symmetric)."""
        pair = (query, candidate, similarity)
        probability = self._scores.get(pair)
        if probability is None:
            texts = self._texts
            features = pair_features_of(texts.of(query), texts.of(candidate), similarity)
            probability = self.weights.model.probability(features)
            self._scores.put(pair, probability)
        return probability

    def decide(self, query: str, candidate: str, similarity: float) -> ReviewVerdict:
        """Synchronous `review`, for benchmarks and offline evaluation."""
        probability = self.score(query, candidate, similarity)
        threshold = self.weights.threshold(detect_language(query), detect_language(candidate))
        return ReviewVerdict(
            same_meaning=probability >= threshold, score=probability, reviewer=self.name
        )

    async def review(
        self,
        query: str,
        candidate: str,
        similarity: float,
        stored_answer: str | None = None,
        *,
        tenant: str | None = None,
        budget_tokens: int | None = None,
    ) -> ReviewVerdict:
        # A pair model over the two requests: the stored answer is not one of its inputs,
        # and it spends no tokens, so no tenant's budget is charged.
        return self.decide(query, candidate, similarity)
