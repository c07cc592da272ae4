"""Embedded exact cache: one SQLite file (WAL) in the data directory.

All SQLite work runs on one dedicated thread: the event loop never blocks on disk, and
the single connection needs no locking. Entries survive restarts; expired ones are
ignored on read, swept on open and by the background sweep (`sweep_expired`). Past the
configured caps (`capacity.exact_cache`) the least recently used entries are evicted.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import orjson

from gateway.cache.eviction import CapacityLedger
from gateway.cache.limits import StoreLimits
from gateway.cache.purge import PurgeFilter
from gateway.storage.embedded.budget import TableBudget, sweep_in_steps
from gateway.storage.embedded.database import SQLiteDatabase
from gateway.storage.embedded.hot_entries import HotEntries, HotEntry
from gateway.storage.protocols import CachedCompletion, StoreUnavailable

T = TypeVar("T")

EXACT_CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS exact_cache (
    key TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    model TEXT NOT NULL,
    completion BLOB NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    namespace TEXT NOT NULL DEFAULT '{}',
    size_bytes INTEGER NOT NULL DEFAULT 0,
    last_used_at REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS exact_cache_expires ON exact_cache (expires_at);
CREATE INDEX IF NOT EXISTS exact_cache_tenant ON exact_cache (tenant, model);
"""

EXACT_CACHE_MIGRATIONS = (
    ("exact_cache", "namespace", "TEXT NOT NULL DEFAULT '{}'"),
    ("exact_cache", "size_bytes", "INTEGER NOT NULL DEFAULT 0"),
    ("exact_cache", "last_used_at", "REAL NOT NULL DEFAULT 0"),
)

# On columns an older file gains through the migrations: created after them. Rows of an
# older file get their size once (and count as least recently used).
EXACT_CACHE_INDEXES = """
CREATE INDEX IF NOT EXISTS exact_cache_lru ON exact_cache (last_used_at);
CREATE INDEX IF NOT EXISTS exact_cache_tenant_lru ON exact_cache (tenant, last_used_at);
UPDATE exact_cache SET size_bytes = length(completion) + length(key) + length(namespace)
    WHERE size_bytes = 0;
"""

# Hits stamp `last_used_at` in batches (one transaction per batch, not one write per
# hit); pending stamps are written before any eviction decision.
_TOUCH_BATCH = 64
# Hits served on the loop (`hot_entries.py`) keep their stamps longer: only eviction
# reads them, and every eviction decision takes them first, so they go to the database
# when this many keys wait or the oldest has waited this long (a flush every 64 keys
# cost a thread hop and a commit per ~100 hits of a hundred hot questions).
_HOT_TOUCH_BATCH = 4_096
_HOT_TOUCH_MAX_AGE_SECONDS = 10.0


class SQLiteExactCache:
    def __init__(
        self,
        database: SQLiteDatabase,
        clock: Callable[[], float] = time.time,
        limits: StoreLimits | None = None,
        ledger: CapacityLedger | None = None,
    ) -> None:
        self._db = database
        self._clock = clock
        self._budget = TableBudget(
            "exact_cache", "exact", limits or StoreLimits(), ledger, key_column="key"
        )
        # key -> when it was last served; written by `_flush_touches` (database thread).
        self._touches: dict[str, float] = {}
        # Repeated hits, answered on the loop (`hot_entries.py`); their stamps wait here
        # and join `_touches` on the database thread.
        self._hot = HotEntries()
        self._hot_touches: dict[str, float] = {}
        self._hot_touches_since = 0.0  # when the oldest waiting stamp was taken
        self._background: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(
        cls,
        data_dir: Path,
        limits: StoreLimits | None = None,
        ledger: CapacityLedger | None = None,
    ) -> SQLiteExactCache:
        database = SQLiteDatabase(data_dir / "gateway.sqlite3")
        await database.open(EXACT_CACHE_SCHEMA, EXACT_CACHE_MIGRATIONS, EXACT_CACHE_INDEXES)
        cache = cls(database, limits=limits, ledger=ledger)
        await cache.sweep_expired()
        # A cap lowered since the last run applies at once.
        await database.run(cache._enforce_all)
        return cache

    # --- worker-thread helpers -----------------------------------------------------------

    def _flush_touches(self) -> None:
        if not self._touches:
            return
        stamps = [(at, key) for key, at in self._touches.items()]
        self._touches.clear()
        self._db.connection.executemany(
            "UPDATE exact_cache SET last_used_at = MAX(last_used_at, ?) WHERE key = ?", stamps
        )

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One commit for a write and what it evicts (each statement alone would commit
        on its own). On failure the totals are recounted from the table."""
        connection = self._db.connection
        connection.execute("BEGIN")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            self._budget.forget_counts()
            raise
        connection.execute("COMMIT")

    def _enforce_all(self) -> None:
        self._budget.ensure_counted(self._db.connection)
        with self._transaction() as connection:
            self._flush_touches()
            self._budget.enforce_all(connection)

    # --- the async API -------------------------------------------------------------------

    async def get(self, key: str) -> CachedCompletion | None:
        now = self._clock()
        hot = self._hot.get(key, now)
        if hot is not None:
            self._touch_later(key, now)
            return _completion(hot)
        generation = self._hot.generation

        def _get() -> HotEntry | None:
            row = self._db.connection.execute(
                "SELECT tenant, model, completion, created_at, expires_at FROM exact_cache "
                "WHERE key = ? AND expires_at > ?",
                (key, now),
            ).fetchone()
            if row is None:
                return None
            self._touches[key] = now
            if len(self._touches) >= _TOUCH_BATCH:
                with self._transaction():
                    self._flush_touches()
            return HotEntry(row[0], row[1], bytes(row[2]), row[3], row[4])

        found = await self._run(_get)
        if found is None:
            return None
        self._hot.remember(key, found, generation)
        return _completion(found)

    async def _run(self, work: Callable[[], T]) -> T:
        """`work` on the database thread. When the database fails (a closed file, a disk
        gone), nothing held in memory is served any more: the requests after it fail
        open as the store's other reads do, until reads succeed and fill the set again."""
        try:
            return await self._db.run(work)
        except StoreUnavailable:
            self._hot.cleared()
            raise

    def _touch_later(self, key: str, at: float) -> None:
        """A hit served on the loop: its stamp goes to the database thread in batches."""
        if not self._hot_touches:
            self._hot_touches_since = at
        self._hot_touches[key] = at
        if (
            len(self._hot_touches) < _HOT_TOUCH_BATCH
            and at - self._hot_touches_since < _HOT_TOUCH_MAX_AGE_SECONDS
        ):
            return
        stamps, self._hot_touches = self._hot_touches, {}

        def _flush() -> None:
            with self._transaction():
                self._take(stamps)
                self._flush_touches()

        task = asyncio.ensure_future(self._run(_flush))
        self._background.add(task)
        task.add_done_callback(_settled(self._background))

    def _take(self, stamps: dict[str, float]) -> None:
        """On the database thread: the loop's stamps join the pending ones."""
        for key, at in stamps.items():
            self._touches[key] = max(at, self._touches.get(key, at))

    def _loop_stamps(self) -> dict[str, float]:
        stamps, self._hot_touches = self._hot_touches, {}
        return stamps

    async def put(self, key: str, entry: CachedCompletion, ttl_seconds: int) -> None:
        payload = orjson.dumps(entry.completion)
        now = self._clock()
        expires_at = now + ttl_seconds

        namespace = orjson.dumps(entry.namespace).decode()
        # What the entry costs on disk, near enough: the row's variable-size columns.
        size_bytes = len(payload) + len(key) + len(namespace)
        # Before the eviction decision below: the stamps of hits served on the loop.
        stamps = self._loop_stamps()
        self._hot.replaced(key)

        def _put() -> list[str]:
            self._budget.ensure_counted(self._db.connection)
            self._take(stamps)
            self._budget.drain_evicted()
            with self._transaction() as connection:
                _write(connection)
            return self._budget.drain_evicted()

        def _write(connection: sqlite3.Connection) -> None:
            previous = connection.execute(
                "SELECT tenant, size_bytes FROM exact_cache WHERE key = ?", (key,)
            ).fetchone()
            connection.execute(
                "INSERT OR REPLACE INTO exact_cache "
                "(key, tenant, model, completion, created_at, expires_at, namespace, "
                "size_bytes, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    entry.tenant,
                    entry.model,
                    payload,
                    entry.created_at,
                    expires_at,
                    namespace,
                    size_bytes,
                    now,
                ),
            )
            self._budget.added(
                entry.tenant, size_bytes, None if previous is None else (previous[0], previous[1])
            )
            self._touches.pop(key, None)
            self._flush_touches()
            self._budget.enforce(connection, entry.tenant)

        for evicted in await self._run(_put):
            self._hot.replaced(evicted)

    async def purge(self, purge_filter: PurgeFilter) -> int:
        def _purge() -> int:
            connection = self._db.connection
            rows = connection.execute(
                "SELECT key, tenant, model, namespace FROM exact_cache"
            ).fetchall()
            doomed = [
                (row[0],)
                for row in rows
                if purge_filter.matches(row[1], row[2], orjson.loads(row[3] or "{}"), row[0])
            ]
            connection.executemany("DELETE FROM exact_cache WHERE key = ?", doomed)
            self._budget.recount(connection)
            return len(doomed)

        self._hot.cleared()
        try:
            return await self._run(_purge)
        finally:
            # Also after it: a read that began before the purge must not keep its row.
            self._hot.cleared()

    async def sweep_expired(self) -> int:
        now = self._clock()

        def _step() -> int:
            self._budget.ensure_counted(self._db.connection)
            return self._budget.sweep_step(self._db.connection, now)

        return await sweep_in_steps(lambda: self._run(_step))

    async def ping(self) -> bool:
        healthy = await self._db.ping()
        if not healthy:
            self._hot.cleared()
        return healthy

    async def close(self) -> None:
        stamps = self._loop_stamps()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

        def _last_touches() -> None:
            self._take(stamps)
            with contextlib.suppress(sqlite3.Error), self._transaction():
                self._flush_touches()  # on failure only LRU order is lost

        if self._db.is_open:
            await self._db.run(_last_touches)
        await self._db.close()


def _completion(entry: HotEntry) -> CachedCompletion:
    return CachedCompletion(
        completion=orjson.loads(entry.payload),
        tenant=entry.tenant,
        model=entry.model,
        created_at=entry.created_at,
    )


def _settled(tasks: set[asyncio.Task[None]]) -> Callable[[asyncio.Task[None]], None]:
    """Done callback of a background stamp flush: forgotten, and its failure retrieved
    (a lost stamp costs only LRU order; the store's next write reports a broken file)."""

    def done(task: asyncio.Task[None]) -> None:
        tasks.discard(task)
        if not task.cancelled():
            task.exception()

    return done
