"""Ranks one scope's memories for a query: calibrated relevance, weighted by validity,
recency and use.

    relevance = P(evidence | features)                (gateway.memory.relevance)
    score     = relevance * (1 - recency_weight - access_weight
                             + recency_weight * recency + access_weight * access)
                          * (1 if the fact holds now else stale_factor)

Only current versions are ranked (a superseded one is kept for audit, never retrieved),
and no procedural memory (those are injected whole, in order: `ScopeIndex.procedural`).
A fact that does not hold at `now` (outside valid_from/valid_to) is left out when
`stale_factor` is 0, the default; `now` is the request's time or a search's `as_of`.

The features come from two signals computed over the whole scope:
- dense: the embedder's cosine (also reported rescaled, `dense_floor` -> 0 and
  `dense_ceiling` -> 1, as `ScoredMemory.dense`);
- keyword: BM25 over the scope, divided by what a memory of average length holding each
  query term once would score (capped at 1), so a memory that contains every query term
  scores 1 whatever the query's length: IDs, codes and names are found exactly even
  where embeddings blur them;
and from their ranks within the query and the memories stored next to each memory.
Recency halves every half-life of the memory's kind (`kind_half_life_days`, else
`recency_half_life_days`) since its last use (last access, else creation); access
grows with the log of uses.

Recency and use only scale relevance: they order relevant memories, they never lift an
irrelevant one. `min_score` and the session cache's `admit_min_score` compare the
calibrated relevance, so they mean a probability of being evidence.

A `ScopeIndex` (`gateway.memory.scope_index`) is built once per version of a user's
memories (see `MemoryService`): the vectors stacked in one matrix, an inverted index of
keyword terms with its BM25 norms, the time and use columns, each row's dedup key;
ranking a query is then a few numpy operations over the whole scope.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from gateway.memory.candidates import RELEVANCE_CANDIDATES_PER_SIGNAL, candidate_rows
from gateway.memory.records import MEMORY_KINDS, MemoryRecord, Vector
from gateway.memory.relevance import (
    RelevanceScorer,
    neighbours,
    packaged_relevance_model,
    relevance_features_at,
)
from gateway.memory.scope_index import BM25_K1
from gateway.memory.scope_index import ScopeIndex as ScopeIndex
from gateway.memory.scope_index import TermCache as TermCache
from gateway.memory.text import dedup_key, keyword_terms
from gateway.policy.memory import MemoryRankingPolicy

RankMode = Literal["fused", "dense", "keyword"]
Floats = npt.NDArray[np.float64]
Indices = npt.NDArray[np.int64]
Products = npt.NDArray[np.float32]

_SECONDS_PER_DAY = 86400.0
_ACCESS_SATURATION = math.log1p(20)  # 20 uses count as fully established


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    record: MemoryRecord
    score: float  # what the ranking orders by (see `rank`)
    dense: float
    keyword: float
    # P(evidence for the query) on the calibrated scale (`gateway.memory.relevance`):
    # what the floors (`min_score`, the session cache's `admit_min_score`) compare.
    relevance: float = 0.0
    shared_terms: int = 0  # distinct keyword terms of the query the memory holds
    # `dedup_key(record.content)` as the scope's index holds it ("": not given, see
    # `result_key`); results are deduplicated and merged by it on every turn.
    key: str = field(default="", compare=False, repr=False)


def result_key(scored: ScoredMemory) -> str:
    """The result's dedup key: the index's, else worked out from its text."""
    return scored.key or dedup_key(scored.record.content)


def rank(
    index: ScopeIndex,
    query_text: str,
    query_vector: Vector | None,
    now: float,
    settings: MemoryRankingPolicy,
    top_k: int,
    mode: RankMode = "fused",
    *,
    relevance_model: RelevanceScorer | None = None,
    candidates_per_signal: int = RELEVANCE_CANDIDATES_PER_SIGNAL,
    distinct: int | None = None,
    product: Products | None = None,
) -> list[ScoredMemory]:
    """Best first, at most `top_k`. "fused": ordered by calibrated relevance times the
    modifiers, floored at `min_score` on the calibrated relevance, the model scoring
    only the candidates (`gateway.memory.candidates`); "dense" and "keyword"
    (baselines): ordered by that one signal times the modifiers, floored on that
    product. With `distinct`: of those, only the first of each distinct text (dedup
    key), at most `distinct`, which is what the searches keep
    (`gateway.memory.ranked`); the others are never built. `product`:
    `vector_product(index, query_vector)`, when the caller worked it out already (in a
    worker thread: `gateway.memory.ranked`)."""
    if index.size == 0 or top_k <= 0:
        return []
    found = signals(index, query_text, query_vector, product)
    adjacent = index.adjacent if index.adjacent is not None else neighbours(index.created_at)
    # The baselines order by one signal times the modifiers: every row counts there.
    per_signal = candidates_per_signal if mode == "fused" else 0
    rows = candidate_rows(found.cosine, found.usable, found.keyword, adjacent, per_signal)
    dense = _dense(found.cosine[rows], found.usable[rows], settings)
    keyword = found.keyword[rows]
    model = relevance_model or packaged_relevance_model()
    relevance = model.probability(
        relevance_features_at(rows, found.cosine, found.keyword, found.usable, adjacent)
    )
    floored = {"dense": dense, "keyword": keyword}.get(mode, relevance)
    modifiers = _modifiers(index, now, settings, rows)
    scores = floored * modifiers
    # NaN: a row `_modifiers` leaves out (superseded, procedural, not valid now): it
    # sorts last and never passes `min_score`.
    left_out = np.isnan(modifiers)
    if mode != "fused":
        floored = scores
    else:
        # The model's probabilities assume the scope holds evidence for the turn; a
        # memory sharing no keyword term and scoring under `dense_floor` (what unrelated
        # texts score) is evidence of nothing, however few memories compete with it.
        left_out |= (found.shared_terms[rows] == 0) & (dense <= 0)
    scores = np.where(left_out, -np.inf, scores)
    floored = np.where(left_out, -np.inf, floored)
    order = top_rows(scores, top_k)
    kept = order[floored[order] >= settings.min_score]
    if distinct is not None:
        kept = _first_per_text(index, rows, kept, distinct)
    columns = (scores, dense, keyword, relevance)
    return _results(index, rows[kept], found.shared_terms[rows[kept]], *(c[kept] for c in columns))


def _first_per_text(index: ScopeIndex, rows: Indices, kept: Indices, limit: int) -> Indices:
    """Of `kept` (positions in `rows`, best first), the first of each distinct text, at
    most `limit`."""
    seen: set[str] = set()
    first: list[int] = []
    for at, row in zip(kept.tolist(), rows[kept].tolist(), strict=True):
        key = index.keys[row] if index.keys else dedup_key(index.records[row].content)
        if key in seen:
            continue
        seen.add(key)
        first.append(at)
        if len(first) == limit:
            break
    return np.asarray(first, dtype=np.int64)


def _results(
    index: ScopeIndex,
    rows: Indices,
    shared_terms: Indices,
    scores: Floats,
    dense: Floats,
    keyword: Floats,
    relevance: Floats,
) -> list[ScoredMemory]:
    """The kept rows as results, in order. `tolist` gives the Python floats and ints
    that `float()` and `int()` of each element would, in one call per column."""
    keys = index.keys
    return [
        ScoredMemory(
            index.records[row],
            round(score, 4),
            dense_value,
            keyword_value,
            round(probability, 4),
            shared,
            keys[row] if keys else "",
        )
        for row, score, dense_value, keyword_value, probability, shared in zip(
            rows.tolist(),
            scores.tolist(),
            dense.tolist(),
            keyword.tolist(),
            relevance.tolist(),
            shared_terms.tolist(),
            strict=True,
        )
    ]


def top_rows(scores: Floats, top_k: int) -> Indices:
    """The rows of the `top_k` highest scores, best first, equal scores in row order:
    exactly `np.argsort(-scores, kind="stable")[:top_k]`, without sorting the whole
    scope (a full sort of 10,000 knowledge items was ~8 % of ranking them, every turn;
    see benchmarks/memory_load.py). Only the rows at or above the k-th best score are
    sorted, ties with it included, so the cut falls where the full sort puts it."""
    negated = -scores
    if top_k >= negated.size:
        return np.argsort(negated, kind="stable")
    kth = np.partition(negated, top_k - 1)[top_k - 1]
    candidates = np.flatnonzero(negated <= kth)  # ascending row order
    ranked: Indices = candidates[np.argsort(negated[candidates], kind="stable")][:top_k]
    return ranked


@dataclass(frozen=True, slots=True)
class Signals:
    """What one query scores on each memory of a scope (one entry per record)."""

    cosine: Floats  # raw, 0 where not comparable
    usable: npt.NDArray[np.bool_]  # where the cosine is comparable
    keyword: Floats  # normalised BM25 in [0, 1]
    shared_terms: Indices  # distinct query keyword terms the memory holds


def signals(
    index: ScopeIndex,
    query_text: str,
    query_vector: Vector | None,
    product: Products | None = None,
) -> Signals:
    """`product`: `vector_product(index, query_vector)`, when worked out already."""
    cosine, usable = _cosine(index, query_vector, product)
    keyword, shared = _keyword(index, query_text)
    return Signals(cosine, usable, keyword, shared)


def comparable(index: ScopeIndex, query: Vector | None) -> bool:
    """Whether `query` can be compared with the scope's vectors (same dimensions)."""
    matrix = index.matrix
    return query is not None and matrix is not None and query.shape == (matrix.shape[1],)


def vector_product(index: ScopeIndex, query: Vector) -> Products:
    """The scope's matrix times the query (float32, one value per row): the one step
    of ranking that reads the whole matrix (20 MB at 10,000 rows of 512), all of it in
    BLAS with the GIL released. Only for a `comparable` query."""
    assert index.matrix is not None
    result: Products = index.matrix @ query.astype(np.float32)
    return result


def _cosine(
    index: ScopeIndex, query: Vector | None, product: Products | None = None
) -> tuple[Floats, npt.NDArray[np.bool_]]:
    """The raw cosine per memory (0 where not comparable), and where it is comparable."""
    none = np.zeros(index.size, dtype=np.bool_)
    if not comparable(index, query):
        return np.zeros(index.size, dtype=np.float64), none
    assert query is not None
    if product is None:
        product = vector_product(index, query)
    cosine = product.astype(np.float64)
    if index.all_vectors:  # the mask would keep every value
        return cosine, index.has_vector
    return np.where(index.has_vector, cosine, 0.0), index.has_vector


def _dense(cosine: Floats, usable: npt.NDArray[np.bool_], settings: MemoryRankingPolicy) -> Floats:
    span = max(settings.dense_ceiling - settings.dense_floor, 1e-6)
    scaled = np.clip((cosine - settings.dense_floor) / span, 0.0, 1.0)
    return np.where(usable, scaled, 0.0)


def _keyword(index: ScopeIndex, query_text: str) -> tuple[Floats, Indices]:
    """Normalised BM25 per memory, and how many distinct query terms each holds."""
    result = np.zeros(index.size, dtype=np.float64)
    shared = np.zeros(index.size, dtype=np.int64)
    query_terms = set(keyword_terms(query_text))
    if not query_terms:
        return result, shared
    count = index.size
    norms = index.bm25_norms  # the scope's, worked out when it was indexed
    best = 0.0
    for term in query_terms:
        rows, tf = index.postings.get(term, (None, None))
        frequency = 0 if rows is None else len(rows)
        # Lucene's BM25 idf: always positive, also for terms in most documents. A term
        # no memory contains is weighed as if one did: with its zero-frequency idf it
        # would dwarf every matched term in a small scope.
        seen = max(frequency, 1)
        idf = math.log(1 + (count - seen + 0.5) / (seen + 0.5))
        best += idf  # a single occurrence in a memory of average length
        if rows is not None and tf is not None:
            result[rows] += idf * tf * (BM25_K1 + 1) / (tf + norms[rows])
            shared[rows] += 1
    if best > 0:
        result /= best
    return np.clip(result, 0.0, 1.0), shared


def _half_lives_days(settings: MemoryRankingPolicy) -> Floats:
    """Per entry of `MEMORY_KINDS` (procedural: never ranked, any value does)."""
    by_kind = settings.kind_half_life_days
    chosen = {
        "episodic": by_kind.episodic,
        "semantic": by_kind.semantic,
        "temporal": by_kind.temporal,
    }
    return np.asarray(
        [chosen.get(kind) or settings.recency_half_life_days for kind in MEMORY_KINDS],
        dtype=np.float64,
    )


def _modifiers(
    index: ScopeIndex, now: float, settings: MemoryRankingPolicy, rows: Indices
) -> Floats:
    """Per row of `rows`: the factor relevance is scaled by, NaN for a row left out."""
    age_days = np.maximum(now - index.last_used_at[rows], 0.0) / _SECONDS_PER_DAY
    half_lives = _half_lives_days(settings)[index.kind_codes[rows]]
    recency = 0.5 ** (age_days / np.maximum(half_lives, 1e-6))
    access = np.minimum(np.log1p(index.access_count[rows]) / _ACCESS_SATURATION, 1.0)
    base = 1.0 - settings.recency_weight - settings.access_weight
    factor = base + settings.recency_weight * recency + settings.access_weight * access
    if not index.has_validity_bounds:
        # Every row holds at any time: the validity factor below would be 1 throughout.
        return factor
    valid_from, valid_to = index.valid_from[rows], index.valid_to[rows]
    started = np.isnan(valid_from) | (now >= valid_from)
    not_ended = np.isnan(valid_to) | (now < valid_to)
    # A stale factor of 0 leaves facts that do not hold at `now` out altogether (NaN),
    # rather than ranking them at 0 where a `min_score` of 0 would still let them in.
    stale = settings.stale_factor if settings.stale_factor > 0 else np.nan
    result: Floats = factor * np.where(started & not_ended, 1.0, stale)
    return result
