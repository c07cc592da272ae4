"""Embedded vector index for the semantic cache: SQLite for durability, numpy for search.

Layout: one SQLite file per index (`semantic-<index_name>.sqlite3` in the data directory).
The index name carries the embedder's name and dimensions (`index_name_for`), so vectors of
two models are never compared, and switching models starts an empty index instead of
serving nonsense matches.

In memory, each fingerprint (tenant, model, parameters and earlier turns, hashed
elsewhere) has its own float32 matrix of unit vectors, grown by doubling, with parallel
entry ids and expiry times. A search is one matrix-vector product over that partition
and an argpartition for the top k: exact, no approximate index to tune or rebuild. At
100k entries in one partition that is ~200 MB streamed per query, ~6 ms on one core; the
SQLite row is fetched only for the few winners, so completions are never held in memory.

Capacity: the index holds at most `capacity.semantic_index` entries and bytes (globally
and per tenant); past a cap the least recently used entry (stored, or returned by a
served) is removed from memory and disk at once, so the vectors held stay bounded
however many fingerprints (namespaces) traffic creates. One tenant holds at most
`EXACT_SEARCH_MAX_TENANT_ENTRIES` entries whatever the caps say: exact search is not
meant for a million entries in one fingerprint (the Redis backend is). Partitions start
at one row and shrink when mostly empty: a fingerprint with one entry costs one vector.

Threading: all work (SQLite and the numpy search) runs on the database's single worker
thread. The in-memory partitions (`partition.py`) are therefore touched by one thread
only and need no locks, and numpy releases the GIL during the product, so the event
loop keeps serving.

At ~520 lines this module is over the ~400-line target on purpose: the rows on disk, the
partitions in memory and the LRU caps are one piece of state kept consistent by one
thread, and most methods below change all three together.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson

from gateway.cache.eviction import CapacityLedger, EvictionReason
from gateway.cache.limits import StoreLimits
from gateway.cache.purge import PurgeFilter
from gateway.storage.embedded.database import SQLiteDatabase
from gateway.storage.embedded.partition import INITIAL_CAPACITY, Partition, unit_vector
from gateway.storage.protocols import SemanticEntry, Vector

logger = logging.getLogger(__name__)

# Little-endian on disk whatever the host, so a data directory can move between machines.
_DISK_DTYPE = np.dtype("<f4")
_INDEX_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Where exact search stops being cheap: a search scans a whole fingerprint, ~2 KiB per
# entry at 512 dimensions, and one tenant's entries may all share one fingerprint. The
# curve (benchmarks/storage_lookup.py; README, "Semantic index at scale"): a few ms at
# 10k entries, tens of ms at 100k, about a second at 1M on a small machine. So one
# tenant holds at most this many entries here, whatever `capacity.semantic_index`
# allows (its oldest are evicted, as past any cap); larger tenants need the Redis
# backend, whose HNSW index is searched in a few ms at 1M.
EXACT_SEARCH_MAX_TENANT_ENTRIES = 100_000

SEMANTIC_SCHEMA = """
CREATE TABLE IF NOT EXISTS semantic_entries (
    entry_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    model TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    query_text TEXT NOT NULL,
    completion BLOB NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    vector BLOB NOT NULL,
    namespace TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS semantic_entries_expires ON semantic_entries (expires_at);
CREATE TABLE IF NOT EXISTS semantic_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _within_exact_search(limits: StoreLimits, max_tenant_entries: int, name: str) -> StoreLimits:
    """The caps, with the per-tenant entry cap lowered to what exact search serves."""
    if limits.tenant_entries() <= max_tenant_entries:
        return limits
    logger.warning(
        "semantic index %s: capacity.semantic_index allows %d entries per tenant, but the "
        "embedded index searches exactly and keeps at most %d per tenant (the oldest are "
        "evicted past that); use storage.backend redis for larger tenants",
        name,
        limits.tenant_entries(),
        max_tenant_entries,
    )
    return limits.model_copy(update={"max_entries_per_tenant": max_tenant_entries})


class EmbeddedVectorIndex:
    """`VectorIndex` in one SQLite file, searched in memory. Build it with `open()`."""

    def __init__(
        self,
        database: SQLiteDatabase,
        clock: Callable[[], float] = time.time,
        name: str = "semantic",
        limits: StoreLimits | None = None,
        ledger: CapacityLedger | None = None,
        max_tenant_entries: int = EXACT_SEARCH_MAX_TENANT_ENTRIES,
    ) -> None:
        self._db = database
        self._name = name
        self._clock = clock
        self._dimensions: int | None = None
        self._partitions: dict[str, Partition] = {}
        # entry_id -> (fingerprint, row): re-adding an id replaces its vector.
        self._rows: dict[str, tuple[str, int]] = {}
        self._limits = _within_exact_search(limits or StoreLimits(), max_tenant_entries, name)
        self._ledger = ledger
        # LRU bookkeeping, per tenant: entry_id -> last used (oldest first), and what
        # each entry counts against the caps.
        self._recency: dict[str, OrderedDict[str, float]] = {}
        self._sizes: dict[str, tuple[str, int]] = {}  # entry_id -> (tenant, bytes)
        self._tenant_usage: dict[str, list[int]] = {}  # tenant -> [entries, bytes]
        # Served entries, appended from the event loop (deque appends are thread-safe)
        # and applied by the worker before its next eviction decision: a hit costs no
        # extra trip to the worker thread.
        self._touched: deque[str] = deque(maxlen=100_000)

    @classmethod
    async def open(
        cls,
        data_dir: Path,
        index_name: str,
        clock: Callable[[], float] = time.time,
        limits: StoreLimits | None = None,
        ledger: CapacityLedger | None = None,
        max_tenant_entries: int = EXACT_SEARCH_MAX_TENANT_ENTRIES,
    ) -> EmbeddedVectorIndex:
        if not _INDEX_NAME.fullmatch(index_name):
            raise ValueError(f"unsafe index name {index_name!r}; use index_name_for()")
        database = SQLiteDatabase(data_dir / f"semantic-{index_name}.sqlite3")
        await database.open(
            SEMANTIC_SCHEMA, (("semantic_entries", "namespace", "TEXT NOT NULL DEFAULT '{}'"),)
        )
        index = cls(
            database,
            clock=clock,
            name=index_name,
            limits=limits,
            ledger=ledger,
            max_tenant_entries=max_tenant_entries,
        )
        try:
            await database.run(index._load)
        except BaseException:
            await database.close()
            raise
        return index

    @property
    def dimensions(self) -> int | None:
        return self._dimensions

    @property
    def partitions(self) -> int:
        """Fingerprints held in memory (each one matrix): for stats and benchmarks."""
        return len(self._partitions)

    # --- worker-thread functions: the only code that touches the partitions ------------

    def _load(self) -> None:
        connection = self._db.connection
        now = self._clock()
        swept = connection.execute(
            "DELETE FROM semantic_entries WHERE expires_at <= ?", (now,)
        ).rowcount
        row = connection.execute(
            "SELECT value FROM semantic_meta WHERE key = 'dimensions'"
        ).fetchone()
        self._dimensions = None if row is None else int(row[0])
        if self._dimensions is None:
            return
        # Size every partition up front: no regrowth copies while loading 100k rows.
        for fingerprint, count in connection.execute(
            "SELECT fingerprint, COUNT(*) FROM semantic_entries GROUP BY fingerprint"
        ):
            capacity = max(INITIAL_CAPACITY, 1 << (int(count) - 1).bit_length())
            self._partitions[fingerprint] = Partition(self._dimensions, capacity)
        expected_bytes = self._dimensions * _DISK_DTYPE.itemsize
        skipped = 0
        # Oldest first: after a restart, recency starts from creation order.
        for entry_id, fingerprint, expires_at, blob, tenant, size, created_at in connection.execute(
            "SELECT entry_id, fingerprint, expires_at, vector, tenant, "
            "length(completion) + length(CAST(query_text AS BLOB)) + length(vector), "
            "created_at FROM semantic_entries ORDER BY created_at"
        ):
            if len(blob) != expected_bytes:
                skipped += 1
                continue
            vector = np.frombuffer(blob, dtype=_DISK_DTYPE)
            row_number = self._partitions[fingerprint].append(entry_id, vector, expires_at)
            self._rows[entry_id] = (fingerprint, row_number)
            self._remember(entry_id, tenant, int(size), float(created_at))
        if skipped:
            logger.warning("semantic index: skipped %d rows of the wrong dimension", skipped)
        logger.info(
            "semantic index %s: loaded %d entries in %d partitions, swept %d expired",
            self._name,
            len(self._rows),
            len(self._partitions),
            swept,
        )
        # A cap lowered since the last run applies at once.
        for tenant in list(self._recency):
            self._enforce(tenant)
        self._publish()

    def _add(self, entry: SemanticEntry, vector: Vector, payload: bytes) -> None:
        self._apply_touches()
        connection = self._db.connection
        # One commit for the row and the rows it evicts. Should the eviction's DELETE
        # fail, the rollback drops the new row too: memory then holds a vector without
        # a row, which search skips (no row, no hit), and the evicted rows return only
        # at the next start, where the cap applies again.
        connection.execute("BEGIN")
        try:
            size_bytes = len(payload) + len(entry.query_text.encode()) + vector.shape[0] * 4
            self._forget(entry.entry_id)
            # Room first, then the write: the partition the entry joins need not grow
            # for an entry that evicts another of the same partition.
            self._enforce(entry.tenant, incoming_bytes=size_bytes)
            self._store(entry, vector, payload)
            self._remember(entry.entry_id, entry.tenant, size_bytes, self._clock())
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
        self._publish()

    def _store(self, entry: SemanticEntry, vector: Vector, payload: bytes) -> None:
        connection = self._db.connection
        if self._dimensions is None:
            self._dimensions = int(vector.shape[0])
            connection.execute(
                "INSERT OR REPLACE INTO semantic_meta (key, value) VALUES ('dimensions', ?)",
                (str(self._dimensions),),
            )
        elif vector.shape[0] != self._dimensions:
            raise ValueError(
                f"vector has {vector.shape[0]} dimensions, the index holds {self._dimensions}"
            )
        connection.execute(
            "INSERT OR REPLACE INTO semantic_entries (entry_id, tenant, model, fingerprint, "
            "query_text, completion, created_at, expires_at, vector, namespace) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.entry_id,
                entry.tenant,
                entry.model,
                entry.fingerprint,
                entry.query_text,
                payload,
                entry.created_at,
                entry.expires_at,
                vector.astype(_DISK_DTYPE, copy=False).tobytes(),
                orjson.dumps(entry.namespace).decode(),
            ),
        )
        previous = self._rows.get(entry.entry_id)
        if previous is not None and previous[0] == entry.fingerprint:
            current = self._partitions[previous[0]]
            current.vectors[previous[1]] = vector
            current.expires[previous[1]] = entry.expires_at
            return
        if previous is not None:
            # Moved to another fingerprint: the old row becomes a tombstone that search
            # skips as expired and the next compaction drops.
            self._partitions[previous[0]].expires[previous[1]] = -math.inf
        existing = self._partitions.get(entry.fingerprint)
        if existing is None:
            partition = self._partitions[entry.fingerprint] = Partition(self._dimensions)
        else:
            partition = existing
        if partition.size == len(partition.expires):
            # Before doubling a full partition, reclaim its expired rows.
            self._compact(entry.fingerprint, partition, self._clock())
        self._rows[entry.entry_id] = (
            entry.fingerprint,
            partition.append(entry.entry_id, vector, entry.expires_at),
        )

    def _compact(self, fingerprint: str, partition: Partition, now: float) -> None:
        dropped = partition.compact(now)
        if not dropped:
            return
        for entry_id, old_row in dropped:
            # A tombstone's id may live on in another partition: forget only this row.
            if self._rows.get(entry_id) == (fingerprint, old_row):
                del self._rows[entry_id]
                self._forget(entry_id)
        for row_number, entry_id in enumerate(partition.ids):
            self._rows[entry_id] = (fingerprint, row_number)

    def _search(
        self, fingerprint: str, query: Vector, top_k: int
    ) -> list[tuple[SemanticEntry, float]]:
        if self._touched:
            self._apply_touches()  # or they would pile up while nothing is written
        partition = self._partitions.get(fingerprint)
        if partition is None or self._dimensions is None:
            return []
        if query.shape[0] != self._dimensions:
            raise ValueError(
                f"query has {query.shape[0]} dimensions, the index holds {self._dimensions}"
            )
        now = self._clock()
        hits = partition.search(query, top_k, now)
        if not hits:
            return []
        # top_k is small: one cheap primary-key lookup per hit keeps the SQL static
        # (see docs/measurements.md#embedded-vector-lookup).
        lookup = self._db.connection.execute
        entries: dict[str, SemanticEntry] = {}
        for entry_id, _ in hits:
            row = lookup(
                "SELECT tenant, model, fingerprint, query_text, completion, created_at, "
                "expires_at FROM semantic_entries WHERE entry_id = ? AND expires_at > ?",
                (entry_id, now),
            ).fetchone()
            if row is not None:
                entries[entry_id] = SemanticEntry(
                    entry_id=entry_id,
                    tenant=row[0],
                    model=row[1],
                    fingerprint=row[2],
                    query_text=row[3],
                    completion=orjson.loads(row[4]),
                    created_at=row[5],
                    expires_at=row[6],
                )
        return [(entries[entry_id], score) for entry_id, score in hits if entry_id in entries]

    def _purge(self, purge_filter: PurgeFilter) -> int:
        connection = self._db.connection
        rows = connection.execute(
            "SELECT entry_id, tenant, model, namespace FROM semantic_entries"
        ).fetchall()
        doomed = [
            row[0]
            for row in rows
            if purge_filter.matches(row[1], row[2], orjson.loads(row[3] or "{}"), row[0])
        ]
        connection.executemany(
            "DELETE FROM semantic_entries WHERE entry_id = ?", [(entry_id,) for entry_id in doomed]
        )
        for entry_id in doomed:
            place = self._rows.get(entry_id)
            if place is not None:
                # A tombstone: search skips it as expired, the next compaction drops it.
                self._partitions[place[0]].expires[place[1]] = -math.inf
            self._forget(entry_id)
        self._publish()
        return len(doomed)

    def _sweep(self) -> int:
        self._apply_touches()
        now = self._clock()
        deleted = self._db.connection.execute(
            "DELETE FROM semantic_entries WHERE expires_at <= ?", (now,)
        ).rowcount
        for fingerprint, partition in list(self._partitions.items()):
            self._compact(fingerprint, partition, now)
            if partition.size == 0:
                del self._partitions[fingerprint]
        if self._ledger is not None:
            self._ledger.evicted("semantic", EvictionReason.EXPIRED, int(deleted))
        self._publish()
        return int(deleted)

    # --- capacity (worker thread) -----------------------------------------------------

    def _apply_touches(self) -> None:
        now = self._clock()
        touched = self._touched
        while touched:
            entry_id = touched.popleft()
            owner = self._sizes.get(entry_id)
            if owner is not None:
                recency = self._recency[owner[0]]
                recency[entry_id] = now
                recency.move_to_end(entry_id)

    def _remember(self, entry_id: str, tenant: str, size_bytes: int, used_at: float) -> None:
        self._recency.setdefault(tenant, OrderedDict())[entry_id] = used_at
        self._sizes[entry_id] = (tenant, size_bytes)
        usage = self._tenant_usage.setdefault(tenant, [0, 0])
        usage[0] += 1
        usage[1] += size_bytes

    def _forget(self, entry_id: str) -> None:
        """Stop counting an entry (idempotent: purges and compactions both call it)."""
        owner = self._sizes.pop(entry_id, None)
        if owner is None:
            return
        tenant, size_bytes = owner
        recency = self._recency[tenant]
        recency.pop(entry_id, None)
        usage = self._tenant_usage[tenant]
        usage[0] -= 1
        usage[1] -= size_bytes
        if not recency:
            del self._recency[tenant]
            del self._tenant_usage[tenant]

    def _totals(self) -> tuple[int, int]:
        entries = size = 0
        for used in self._tenant_usage.values():
            entries += used[0]
            size += used[1]
        return entries, size

    def _enforce(self, tenant: str, incoming_bytes: int | None = None) -> None:
        """Evict until the caps hold, or, with `incoming_bytes`, until one more entry of
        that size fits."""
        limits = self._limits
        doomed: list[str] = []
        extra_entries = 0 if incoming_bytes is None else 1
        extra_bytes = incoming_bytes or 0
        if limits.max_entries_per_tenant is not None or limits.max_bytes_per_tenant is not None:
            while tenant in self._tenant_usage:
                entries, size = self._tenant_usage[tenant]
                if (
                    entries + extra_entries <= limits.tenant_entries()
                    and size + extra_bytes <= limits.tenant_bytes()
                ):
                    break
                doomed.append(self._evict(next(iter(self._recency[tenant]))))
            if doomed and self._ledger is not None:
                self._ledger.evicted("semantic", EvictionReason.TENANT_CAPACITY, len(doomed))
        tenant_evictions = len(doomed)
        while True:
            entries, size = self._totals()
            if not entries or (
                entries + extra_entries <= limits.max_entries
                and size + extra_bytes <= limits.max_bytes
            ):
                break
            # The globally least recently used: the oldest head among the tenants.
            oldest = min(self._recency.values(), key=lambda recency: next(iter(recency.values())))
            doomed.append(self._evict(next(iter(oldest))))
        if self._ledger is not None:
            capacity_evictions = len(doomed) - tenant_evictions
            self._ledger.evicted("semantic", EvictionReason.CAPACITY, capacity_evictions)
        if doomed:
            self._db.connection.executemany(
                "DELETE FROM semantic_entries WHERE entry_id = ?", [(i,) for i in doomed]
            )

    def _evict(self, entry_id: str) -> str:
        """Remove one entry from memory (its row goes with the caller's batch delete)."""
        self._forget(entry_id)
        place = self._rows.pop(entry_id, None)
        if place is not None:
            fingerprint, row = place
            partition = self._partitions[fingerprint]
            last = partition.size - 1
            moved = partition.remove(row)
            if moved is not None and self._rows.get(moved) == (fingerprint, last):
                self._rows[moved] = (fingerprint, row)
            if partition.size == 0:
                del self._partitions[fingerprint]
        return entry_id

    def _publish(self) -> None:
        if self._ledger is not None:
            entries, size = self._totals()
            self._ledger.set_usage("semantic", entries, size)

    def _count(self) -> int:
        now = self._clock()
        return sum(partition.live(now) for partition in self._partitions.values())

    # --- the async API ---------------------------------------------------------------------

    async def add(self, entry: SemanticEntry, vector: Vector) -> None:
        unit = unit_vector(vector, self._dimensions)
        payload = orjson.dumps(entry.completion)
        await self._db.run(lambda: self._add(entry, unit, payload))

    async def search(
        self, fingerprint: str, vector: Vector, top_k: int
    ) -> list[tuple[SemanticEntry, float]]:
        if top_k <= 0:
            return []
        query = unit_vector(vector, self._dimensions)
        return await self._db.run(lambda: self._search(fingerprint, query, top_k))

    async def count(self) -> int:
        """Unexpired entries held."""
        return await self._db.run(self._count)

    def touch(self, entry_id: str) -> None:
        self._touched.append(entry_id)

    async def purge(self, purge_filter: PurgeFilter) -> int:
        return await self._db.run(lambda: self._purge(purge_filter))

    async def sweep_expired(self) -> int:
        """Delete expired entries from disk and memory; returns how many rows went."""
        return await self._db.run(self._sweep)

    async def ping(self) -> bool:
        return await self._db.ping()

    async def close(self) -> None:
        await self._db.close()
