"""The bounded least-recently-used map behind the gateway's small in-process memos (the
classifier's verdicts, the pair reviewer's text analyses, the semantic stage's
embeddings). Used on the event loop only: nothing here awaits, so it needs no lock."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedLRU(Generic[K, V]):
    """At most `max_entries` values, the least recently used out first; 0 keeps none."""

    def __init__(self, max_entries: int) -> None:
        if max_entries < 0:
            raise ValueError("max_entries must be >= 0")
        self._max_entries = max_entries
        self._values: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K) -> V | None:
        found = self._values.get(key)
        if found is not None:
            self._values.move_to_end(key)
        return found

    def put(self, key: K, value: V) -> None:
        if self._max_entries == 0:
            return
        self._values[key] = value
        self._values.move_to_end(key)
        while len(self._values) > self._max_entries:
            self._values.popitem(last=False)

    def clear(self) -> None:
        self._values.clear()
