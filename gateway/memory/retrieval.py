"""Ranks one scope's memories for a query: dense similarity and keyword match fused,
then weighted by validity, recency and use.

    relevance = dense_weight * dense + keyword_weight * keyword          (both in [0, 1])
    score     = relevance * (1 - recency_weight - access_weight
                             + recency_weight * recency + access_weight * access)
                          * (1 if the fact holds now else stale_factor)

- dense: the embedder's cosine, rescaled so that `dense_floor` (what unrelated texts
  score) maps to 0 and `dense_ceiling` to 1;
- keyword: BM25 over the scope, divided by what a memory of average length holding each
  query term once would score (capped at 1), so a memory that contains every query term
  scores 1 whatever the query's length: IDs, codes and names are found exactly even
  where embeddings blur them;
- recency halves every `recency_half_life_days`; access grows with the log of uses.

Recency and use only scale relevance: they order relevant memories, they never lift an
irrelevant one over `min_score`. The score is what the session cache's admission
threshold (0.70 by default) is compared with.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from gateway.memory.records import MemoryRecord, Vector
from gateway.memory.text import keyword_terms
from gateway.policy.models import MemoryRankingPolicy

RankMode = Literal["fused", "dense", "keyword"]

_BM25_K1 = 1.2
_BM25_B = 0.75
_SECONDS_PER_DAY = 86400.0
_ACCESS_SATURATION = math.log1p(20)  # 20 uses count as fully established


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    record: MemoryRecord
    score: float
    dense: float
    keyword: float


class MemoryRanker:
    """Stateless apart from a bounded cache of each memory's keyword terms (memories
    are ADD-only, so an id's terms never change)."""

    def __init__(self, embedder_name: str, term_cache_size: int = 50_000) -> None:
        self._embedder = embedder_name
        self._terms: OrderedDict[str, Counter[str]] = OrderedDict()
        self._term_cache_size = term_cache_size

    def rank(
        self,
        records: Sequence[MemoryRecord],
        query_text: str,
        query_vector: Vector | None,
        now: float,
        settings: MemoryRankingPolicy,
        top_k: int,
        mode: RankMode = "fused",
    ) -> list[ScoredMemory]:
        usable = [record for record in records if record.quarantine is None]
        if not usable or top_k <= 0:
            return []
        dense = self._dense(usable, query_vector, settings)
        keyword = self._keyword(usable, query_text)
        if mode == "dense":
            relevance = dense
        elif mode == "keyword":
            relevance = keyword
        else:
            relevance = settings.dense_weight * dense + settings.keyword_weight * keyword
        modifiers = np.array([_modifier(record, now, settings) for record in usable])
        scores = relevance * modifiers
        order = np.argsort(-scores, kind="stable")
        ranked: list[ScoredMemory] = []
        for index in order[:top_k]:
            score = float(scores[index])
            if score < settings.min_score:
                break
            ranked.append(
                ScoredMemory(
                    usable[index], round(score, 4), float(dense[index]), float(keyword[index])
                )
            )
        return ranked

    def _dense(
        self, records: Sequence[MemoryRecord], query: Vector | None, settings: MemoryRankingPolicy
    ) -> np.ndarray:
        result = np.zeros(len(records), dtype=np.float64)
        if query is None:
            return result
        rows = [
            i
            for i, record in enumerate(records)
            # Vectors of another embedder are not comparable: such memories are found
            # by keyword only until re-embedded.
            if record.vector is not None
            and record.embedder == self._embedder
            and record.vector.shape == query.shape
        ]
        if not rows:
            return result
        matrix = np.stack([records[i].vector for i in rows])  # type: ignore[misc]
        cosine = matrix @ query.astype(np.float32)
        span = max(settings.dense_ceiling - settings.dense_floor, 1e-6)
        result[rows] = np.clip((cosine - settings.dense_floor) / span, 0.0, 1.0)
        return result

    def _keyword(self, records: Sequence[MemoryRecord], query_text: str) -> np.ndarray:
        result = np.zeros(len(records), dtype=np.float64)
        query_terms = set(keyword_terms(query_text))
        if not query_terms:
            return result
        documents = [self._terms_of(record) for record in records]
        lengths = np.array([sum(doc.values()) for doc in documents], dtype=np.float64)
        average_length = max(float(lengths.mean()), 1.0)
        count = len(documents)
        best = 0.0
        for term in query_terms:
            frequency = sum(1 for doc in documents if term in doc)
            # Lucene's BM25 idf: always positive, also for terms in most documents. A
            # term no memory contains is weighed as if one did: with its zero-frequency
            # idf it would dwarf every matched term in a small scope.
            idf = math.log(1 + (count - max(frequency, 1) + 0.5) / (max(frequency, 1) + 0.5))
            best += idf  # a single occurrence in a memory of average length
            if frequency == 0:
                continue
            for i, doc in enumerate(documents):
                tf = doc.get(term, 0)
                if tf:
                    norm = _BM25_K1 * (1 - _BM25_B + _BM25_B * lengths[i] / average_length)
                    result[i] += idf * tf * (_BM25_K1 + 1) / (tf + norm)
        if best > 0:
            result /= best
        return np.clip(result, 0.0, 1.0)

    def _terms_of(self, record: MemoryRecord) -> Counter[str]:
        terms = self._terms.get(record.id)
        if terms is None:
            terms = Counter(keyword_terms(record.content))
            self._terms[record.id] = terms
            if len(self._terms) > self._term_cache_size:
                self._terms.popitem(last=False)
        else:
            self._terms.move_to_end(record.id)
        return terms


def _modifier(record: MemoryRecord, now: float, settings: MemoryRankingPolicy) -> float:
    age_days = max(now - record.created_at, 0.0) / _SECONDS_PER_DAY
    recency: float = 0.5 ** (age_days / max(settings.recency_half_life_days, 1e-6))
    access = min(math.log1p(record.access_count) / _ACCESS_SATURATION, 1.0)
    base = 1.0 - settings.recency_weight - settings.access_weight
    factor = base + settings.recency_weight * recency + settings.access_weight * access
    return factor * (1.0 if record.holds_at(now) else settings.stale_factor)
