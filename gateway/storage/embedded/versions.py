"""The scope versions an embedded store last read, kept in the process so that the
memory stage's per-turn version reads (a user's memories, a tenant's knowledge) need
no hop to the database thread (docs/measurements.md#memory-work-per-miss).

Sound because the embedded backend's database belongs to one process (its stores are
the only writers; `gateway memory cleanup` goes through the running gateway), and
because the mirror is filled and emptied only on the database's own thread, in order
with the writes: a read stores what it read in the same step, and every write that
bumps a version drops that version inside its transaction, before it commits. So a
version is in the mirror only while it is the one committed, and a write's caller
(whose future resolves after the commit) never reads the old one back. A write that
rolls back has dropped a version that still holds: the next read reads it again.
"""

from __future__ import annotations

from collections.abc import Hashable

# Past this many scopes the mirror starts over (each costs one read to fill again).
MAX_MIRRORED_VERSIONS = 100_000


class VersionMirror:
    def __init__(self, max_entries: int = MAX_MIRRORED_VERSIONS) -> None:
        # Plain dict operations, each atomic under the GIL: the loop reads while the
        # database thread fills and drops.
        self._versions: dict[Hashable, str] = {}
        self._max_entries = max_entries

    def get(self, scope: Hashable) -> str | None:
        """The scope's committed version, if mirrored (from any thread)."""
        return self._versions.get(scope)

    def remember(self, scope: Hashable, version: str) -> None:
        """On the database thread, in the same step as the read of `version`."""
        if len(self._versions) >= self._max_entries:
            self._versions.clear()
        self._versions[scope] = version

    def forget(self, scope: Hashable) -> None:
        """On the database thread, inside the transaction that bumps the version."""
        self._versions.pop(scope, None)
