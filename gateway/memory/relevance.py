"""Calibrated relevance: the probability that a retrieved memory is evidence for the
query, from the signals retrieval computes for every memory of the scope.

The fused rank score (a weighted sum of rescaled cosine and normalised BM25) orders
memories but means nothing on its own: on real input the best matches of a query that
plainly is about them score 0.2-0.4, far under any floor one would write down. This
model maps the same signals to P(evidence), a logistic regression fitted on LoCoMo
conversations 0-2 by `python -m gateway_tools.training.fit_memory_relevance` and
checked on conversations 3-4 (README, "Memory recall (LoCoMo)"). Floors on this scale
mean a probability: of the held-out items scored 0.70-0.90, 63 % were evidence.

Features, per memory, for one query over one scope (`FEATURE_NAMES`):
- cosine: the embedder's raw cosine (0 without a vector);
- keyword: BM25 normalised so that holding every query term once scores 1;
- dense_rank, keyword_rank: log(1 + how many memories score strictly higher), so that
  the best match of a query counts as such whatever the absolute scale of the query;
- cosine_gap: cosine minus the best cosine of the query;
- keyword_share: keyword over the best keyword score of the query;
- scope_size: log(1 + memories in the scope), how many compete for the query;
- neighbour_keyword_lift, neighbour_cosine_lift: how much better than the memory
  itself the better of its two neighbours (the memories stored just before and just
  after it, by `created_at`) matches, by keyword_share and by cosine_gap; 0 when the
  memory matches at least as well. In a conversation the evidence is often the reply
  to the turn that names the subject ("Where did you go?" - "To the lake"), which the
  query matches while the reply does not. Only a lift: a memory is never marked down
  for unrelated neighbours (facts stored one after another need not be related), and
  of two memories saying the same thing neither gains by its place in time;
- a few products and indicators that let the linear model bend: keyword_share times
  cosine_gap, whether the memory is the best by keyword / by meaning, keyword squared.

The fitted model is a function of the embedder: weights fitted on one embedder's
cosines are not valid for another's (`embedder` in the file).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from gateway.weights_file import WeightsFile

Floats = npt.NDArray[np.float64]
Indices = npt.NDArray[np.int64]

MODEL_FORMAT = "memory-relevance-logistic-v1"
MODEL_NAME = "memory-relevance-v1"
FEATURE_NAMES: tuple[str, ...] = (
    "cosine",
    "keyword",
    "dense_rank",
    "keyword_rank",
    "cosine_gap",
    "keyword_share",
    "scope_size",
    "neighbour_keyword_lift",
    "neighbour_cosine_lift",
    "share_times_gap",
    "keyword_top",
    "dense_top",
    "keyword_squared",
)


class RelevanceScorer(Protocol):
    """Maps `relevance_features` rows to P(evidence) (`RelevanceModel`; tests may use
    a scorer whose outputs are known exactly)."""

    def probability(self, features: Floats) -> Floats: ...


class RelevanceModelFormatError(ValueError):
    """The relevance weights file is malformed."""


def competition_rank(values: Floats) -> Floats:
    """For each value, how many values are strictly greater (ties share the rank)."""
    return ranks_among(values, values)


def ranks_among(values: Floats, queries: Floats) -> Floats:
    """For each of `queries`, how many of `values` are strictly greater: one sort of
    `values` and a binary search per query, so ranking a few candidates of a large
    scope does not search for every row of it. The queries are searched in sorted
    order (each search starts where the last ended: a quarter of the time of searching
    them in row order, measured on 1,255 candidates of 10,000 rows) and the counts put
    back in their order."""
    ordered = np.sort(-values)
    keys = -queries
    order = np.argsort(keys)
    ranks = np.empty(keys.shape[0], dtype=np.float64)
    ranks[order] = np.searchsorted(ordered, keys[order], side="left")
    return ranks


def relevance_features(
    cosine: Floats,
    keyword: Floats,
    has_vector: npt.NDArray[np.bool_],
    created_at: Floats,
) -> Floats:
    """The feature matrix (one row per memory, columns in `FEATURE_NAMES` order).
    Memories without a usable vector (or a query without one: `has_vector` all false)
    rank last by meaning and count cosine 0; memories with no query term rank last by
    keyword."""
    before, after = neighbours(created_at)
    rows = np.arange(cosine.shape[0], dtype=np.int64)
    return relevance_features_at(rows, cosine, keyword, has_vector, (before, after))


def relevance_features_at(
    rows: Indices,
    cosine: Floats,
    keyword: Floats,
    has_vector: npt.NDArray[np.bool_],
    adjacent: tuple[Indices, Indices],
) -> Floats:
    """`relevance_features` of `rows` only (in that order), the same numbers: ranks,
    best scores and neighbours still come from the whole scope. `adjacent`: what
    `neighbours` returns for the scope's `created_at` (fixed per scope: computed once
    when the scope is indexed)."""
    count = cosine.shape[0]
    worst = float(count)
    # Every row comparable (the usual case): the masks by `has_vector` would keep every
    # value, so they are skipped (the same numbers, less work over the whole scope).
    every = bool(has_vector.all())
    picked_vector = has_vector[rows]
    dense_values = cosine if every else np.where(has_vector, cosine, -2.0)
    dense_rank = np.where(picked_vector, ranks_among(dense_values, dense_values[rows]), worst)
    picked_keyword = keyword[rows]
    matched = picked_keyword > 0
    # Only memories holding a query term can outrank one that holds one.
    keyword_rank = np.where(matched, ranks_among(keyword[keyword > 0], picked_keyword), worst)
    if not every:
        cosine = np.where(has_vector, cosine, 0.0)
    comparable = cosine if every else cosine[has_vector]
    best_cosine = float(comparable.max()) if comparable.size else 0.0
    best_keyword = float(keyword.max()) if count else 0.0
    before, after = adjacent[0][rows], adjacent[1][rows]
    # Shares and gaps of the rows and their neighbours only, not of the whole scope.
    lift = _Lift(keyword, best_keyword, cosine, best_cosine, None if every else has_vector)
    share, gap = lift.share(rows), lift.gap(rows)
    neighbour_share = np.maximum(_at(lift.share, before, 0.0), _at(lift.share, after, 0.0))
    neighbour_gap = np.maximum(_at(lift.gap, before, -1.0), _at(lift.gap, after, -1.0))
    columns = (
        cosine[rows],
        picked_keyword,
        np.log1p(dense_rank),
        np.log1p(keyword_rank),
        gap,
        share,
        np.full(rows.shape[0], math.log1p(count)),
        np.maximum(neighbour_share - share, 0.0),
        np.maximum(neighbour_gap - gap, 0.0),
        share * gap,
        (keyword_rank == 0).astype(np.float64),
        (dense_rank == 0).astype(np.float64),
        picked_keyword**2,
    )
    return np.stack(columns, axis=1).astype(np.float64, copy=False)


@dataclass(frozen=True, slots=True)
class _Lift:
    """keyword_share (keyword over the query's best) and cosine_gap (cosine minus the
    best; -1 without a vector) of given rows: elementwise, so the same numbers as
    when worked out for the whole scope and then picked."""

    keyword: Floats
    best_keyword: float
    cosine: Floats
    best_cosine: float
    has_vector: npt.NDArray[np.bool_] | None  # None: every row has one

    def share(self, rows: Indices) -> Floats:
        if self.best_keyword > 0:
            shares: Floats = self.keyword[rows] / self.best_keyword
            return shares
        return np.zeros(rows.shape[0])

    def gap(self, rows: Indices) -> Floats:
        gaps: Floats = self.cosine[rows] - self.best_cosine
        if self.has_vector is None:
            return gaps
        return np.where(self.has_vector[rows], gaps, -1.0)


def neighbours(created_at: Floats) -> tuple[Indices, Indices]:
    """Per memory, the row of the memory created just before it and just after it
    (-1: none); ties keep the rows' order."""
    order = np.argsort(np.nan_to_num(created_at, nan=0.0), kind="stable")
    before = np.full(order.shape[0], -1, dtype=np.int64)
    after = np.full(order.shape[0], -1, dtype=np.int64)
    before[order[1:]] = order[:-1]
    after[order[:-1]] = order[1:]
    return before, after


def _at(values: Callable[[Indices], Floats], rows: Indices, missing: float) -> Floats:
    """`values` of `rows`, `missing` where a row is -1 (no neighbour)."""
    picked: Floats = np.where(rows >= 0, values(np.maximum(rows, 0)), missing)
    return picked


@dataclass(frozen=True, slots=True)
class RelevanceModel(WeightsFile):
    """Logistic regression over standardised features: p = 1 / (1 + exp(-z)),
    z = bias + sum(weight * (feature - mean) / scale)."""

    FORMAT_ERROR: ClassVar[type[ValueError]] = RelevanceModelFormatError
    PACKAGE: ClassVar[str] = "gateway.memory"
    RESOURCE: ClassVar[str] = f"models/{MODEL_NAME}.json"

    weights: Floats
    means: Floats
    scales: Floats
    bias: float
    embedder: str  # the embedder whose cosines the model was fitted on

    def probability(self, features: Floats) -> Floats:
        z = self.bias + ((features - self.means) / self.scales) @ self.weights
        result: Floats = 1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0)))
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "features": list(FEATURE_NAMES),
            "weights": [float(v) for v in self.weights],
            "means": [float(v) for v in self.means],
            "scales": [float(v) for v in self.scales],
            "bias": float(self.bias),
            "embedder": self.embedder,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RelevanceModel:
        if data.get("format") != MODEL_FORMAT:
            raise RelevanceModelFormatError(f"unsupported format {data.get('format')!r}")
        if data.get("features") != list(FEATURE_NAMES):
            raise RelevanceModelFormatError(f"'features' must be {list(FEATURE_NAMES)}")
        try:
            weights, means, scales = (
                _vector(data, name) for name in ("weights", "means", "scales")
            )
            bias = float(data["bias"])
            embedder = str(data["embedder"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RelevanceModelFormatError(f"bad field: {exc}") from exc
        if np.any(scales <= 0) or not np.all(np.isfinite(weights)):
            raise RelevanceModelFormatError("scales must be positive and weights finite")
        return cls(weights, means, scales, bias, embedder)


def _vector(data: Mapping[str, Any], name: str) -> Floats:
    values: Sequence[Any] = data[name]
    if len(values) != len(FEATURE_NAMES):
        raise ValueError(f"{name!r} needs {len(FEATURE_NAMES)} numbers")
    return np.asarray([float(v) for v in values], dtype=np.float64)


@functools.cache
def packaged_relevance_model() -> RelevanceModel:
    """The shipped model, read once per process on first use (not at import)."""
    return RelevanceModel.packaged()
