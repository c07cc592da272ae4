"""Runs one scope's ranking and keeps one result per distinct text: what memory and
knowledge search share."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from gateway.memory.retrieval import ScoredMemory, result_key

# A scope larger than this is ranked in a worker thread: the event loop keeps serving
# other requests meanwhile (ranking is mostly numpy, which releases the GIL; see
# docs/measurements.md#memory-indexing-and-ranking-off-the-event-loop). Smaller scopes
# are ranked in place, cheaper than the thread hop.
RANK_IN_THREAD_ABOVE_RECORDS = 2000


async def ranked_once_per_text(
    ranking: Callable[[], list[ScoredMemory]], scope_size: int, top_k: int
) -> list[ScoredMemory]:
    """Runs `ranking` (in a worker thread for a large scope) and keeps the best `top_k`,
    one per distinct text (the best-scored copy): what memory and knowledge search share."""
    ranked = (
        await asyncio.to_thread(ranking) if scope_size > RANK_IN_THREAD_ABOVE_RECORDS else ranking()
    )
    seen: set[str] = set()
    unique: list[ScoredMemory] = []
    for scored in ranked:
        key = result_key(scored)  # the index's, not hashed again
        if key not in seen:
            seen.add(key)
            unique.append(scored)
    return unique[:top_k]
