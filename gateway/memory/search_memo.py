"""Recent searches of one prepared scope (a user's memories, a tenant's knowledge), by
query: a repeated question (an exact cache hit, where memory and knowledge are
retrieved before the lookup) is answered without ranking the scope again, nor
embedding the question.

A memo belongs to one prepared index (`MemoryService` and `KnowledgeService` keep it
next to it): when the scope's version changes (any add or delete, by any replica) the
index is rebuilt and its memo starts empty, so a memo never outlives what it ranked.
Entries also expire after `max_age_seconds`, or earlier where the caller says (a
memory's validity window opening or closing): ranking depends a little on the time
(recency), and an entry is at most that much older than a fresh ranking would be.
Bounded (LRU). Results ranked without a query vector (the embedder failed) are not
kept by the services: the next turn ranks again by meaning.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

import numpy as np

from gateway.memory.retrieval import ScopeIndex, ScoredMemory

DEFAULT_MAX_ENTRIES = 256
DEFAULT_MAX_AGE_SECONDS = 60.0


class SearchMemo:
    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_age_seconds: float = DEFAULT_MAX_AGE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries: OrderedDict[Hashable, tuple[float, tuple[ScoredMemory, ...]]] = OrderedDict()
        self._max_entries = max_entries
        self._max_age = max_age_seconds
        self._clock = clock
        # Searches of large scopes finish in worker threads.
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, key: Hashable) -> list[ScoredMemory] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            expires_at, results = entry
            if self._clock() >= expires_at:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return list(results)

    def put(
        self, key: Hashable, results: list[ScoredMemory], expires_at: float | None = None
    ) -> None:
        """Keeps `results` for `max_age_seconds`, or until `expires_at` when earlier
        (on this memo's clock)."""
        until = self._clock() + self._max_age
        if expires_at is not None:
            until = min(until, expires_at)
        with self._lock:
            self._entries[key] = (until, tuple(results))
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)


def next_validity_change(index: ScopeIndex, now: float) -> float | None:
    """When a memory of `index` next starts or stops holding (after `now`): a ranking
    made before then leaves that memory out, or in, wrongly after it."""
    bounds = np.concatenate((index.valid_from, index.valid_to))
    later = bounds[bounds > now]  # NaN (no bound) compares false
    return float(later.min()) if later.size else None
