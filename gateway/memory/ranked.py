"""Runs one scope's ranking and keeps one result per distinct text: what memory and
knowledge search share."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from gateway.memory.records import Vector
from gateway.memory.retrieval import (
    Products,
    ScopeIndex,
    ScoredMemory,
    comparable,
    result_key,
    vector_product,
)

# A scope larger than this has its vector product worked out in a worker thread: the
# product reads the whole matrix (20 MB at 10,000 rows) in BLAS with the GIL released,
# so the event loop meanwhile ranks the request's other scope or serves other requests.
# The rest of ranking is numpy calls on a few thousand values and the Python between
# them, which hold the GIL: in a thread they would only contend with the loop for it
# (docs/measurements.md#memory-work-per-miss), so it runs on the loop. Smaller scopes
# are ranked in place, cheaper than the thread hop.
PRODUCT_IN_THREAD_ABOVE_RECORDS = 2000
# A scope larger than this is ranked wholly in a worker thread: its sorts and
# selections over the whole scope are long enough that the loop should not wait on
# them (numpy releases the GIL in them too).
RANK_IN_THREAD_ABOVE_RECORDS = 50_000


class Ranking(Protocol):
    """`gateway.memory.retrieval.rank` with every argument but `product` bound."""

    def __call__(self, *, product: Products | None = None) -> list[ScoredMemory]: ...


async def ranked_once_per_text(
    ranking: Ranking, index: ScopeIndex, query_vector: Vector | None, top_k: int
) -> list[ScoredMemory]:
    """Runs `ranking` of `index` for `query_vector` (its vector product, or all of it, in
    a worker thread for a large scope) and keeps the best `top_k`, one per distinct
    text (the best-scored copy): what memory and knowledge search share."""
    ranked = await _ranked(ranking, index, query_vector)
    seen: set[str] = set()
    unique: list[ScoredMemory] = []
    for scored in ranked:
        key = result_key(scored)  # the index's, not hashed again
        if key not in seen:
            seen.add(key)
            unique.append(scored)
    return unique[:top_k]


async def _ranked(
    ranking: Ranking, index: ScopeIndex, query_vector: Vector | None
) -> list[ScoredMemory]:
    if index.size > RANK_IN_THREAD_ABOVE_RECORDS:
        whole: Callable[[], list[ScoredMemory]] = ranking
        return await asyncio.to_thread(whole)
    if index.size > PRODUCT_IN_THREAD_ABOVE_RECORDS and comparable(index, query_vector):
        assert query_vector is not None
        product = await asyncio.to_thread(vector_product, index, query_vector)
        return ranking(product=product)
    return ranking()
