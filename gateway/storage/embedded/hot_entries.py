"""The embedded exact cache's recently served entries, kept in the process so that a
repeated hit needs no hop to the database thread
(docs/measurements.md#exact-hits-on-the-embedded-backend).

Sound for the same reason as `versions.py`: the embedded database belongs to one
process, whose store is the only one that replaces or deletes its entries (`gateway
cache import`, the one other writer, only adds). Every replacement and purge goes
through `SQLiteExactCache`, which updates or empties this set and moves `generation`
on, so that a read that was under way meanwhile does not put back what it read before
the change. Expiry is checked on every read; evictions drop their keys; and when the
database fails (a closed file, a lost disk) the set is emptied, so that requests fail
open as the store's other reads do rather than being served from memory alone.

Used on the event loop only.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

# What a set holds at most: the most repeated questions, not the whole cache.
MAX_HOT_ENTRIES = 2_048
MAX_HOT_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class HotEntry:
    tenant: str
    model: str
    payload: bytes  # the stored completion (orjson), parsed afresh for every hit
    created_at: float
    expires_at: float


class HotEntries:
    def __init__(self, max_entries: int = MAX_HOT_ENTRIES, max_bytes: int = MAX_HOT_BYTES) -> None:
        self._entries: OrderedDict[str, HotEntry] = OrderedDict()
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._bytes = 0
        # Moves on with every change to the store's entries (see the module docstring).
        self.generation = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, now: float) -> HotEntry | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expires_at <= now:
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return entry

    def remember(self, key: str, entry: HotEntry, generation: int) -> None:
        """What a read found, unless the store changed since the read began."""
        if generation != self.generation or len(entry.payload) > self._max_bytes:
            return
        self._drop(key)
        self._entries[key] = entry
        self._bytes += len(entry.payload)
        while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
            _, oldest = self._entries.popitem(last=False)
            self._bytes -= len(oldest.payload)

    def replaced(self, key: str) -> None:
        """`key` is being written: what is held for it is gone, and reads under way
        must not bring it back."""
        self.generation += 1
        self._drop(key)

    def cleared(self) -> None:
        """Entries were deleted (a purge): nothing held may be served again."""
        self.generation += 1
        self._entries.clear()
        self._bytes = 0

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry.payload)
