"""Embedded exact cache: one SQLite file (WAL) in the data directory.

All SQLite work runs on one dedicated thread: the event loop never blocks on disk, and
the single connection needs no locking. Entries survive restarts; expired ones are
ignored on read and swept on open.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import orjson

from gateway.cache.protocols import CachedCompletion
from gateway.cache.purge import PurgeFilter

T = TypeVar("T")

EXACT_CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS exact_cache (
    key TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    model TEXT NOT NULL,
    completion BLOB NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    namespace TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS exact_cache_expires ON exact_cache (expires_at);
CREATE INDEX IF NOT EXISTS exact_cache_tenant ON exact_cache (tenant, model);
"""


EXACT_CACHE_MIGRATIONS = (("exact_cache", "namespace", "TEXT NOT NULL DEFAULT '{}'"),)


class SQLiteDatabase:
    """One SQLite connection owned by one worker thread."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        self._connection: sqlite3.Connection | None = None

    async def open(self, schema: str, migrations: tuple[tuple[str, str, str], ...] = ()) -> None:
        """`migrations`: (table, column, definition) added when an older file lacks
        them, so a data directory written by an older version keeps working."""

        def _open() -> None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            # NORMAL with WAL: durable across process crashes; only an OS crash can
            # lose the last transactions, which for a cache is acceptable.
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA busy_timeout=5000")
            connection.executescript(schema)
            for table, column, definition in migrations:
                columns = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
                if column not in columns:
                    connection.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
            self._connection = connection

        await self.run(_open)

    async def run(self, work: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, work)

    @property
    def connection(self) -> sqlite3.Connection:
        if self._connection is None:
            # A sqlite3 error, so callers handle "closed" like any other store failure.
            raise sqlite3.ProgrammingError("database is not open")
        return self._connection

    async def ping(self) -> bool:
        """Whether the database answers; False once closed or broken."""

        def _ping() -> bool:
            self.connection.execute("SELECT 1").fetchone()
            return True

        try:
            return await self.run(_ping)
        except (sqlite3.Error, RuntimeError):
            return False

    async def close(self) -> None:
        def _close() -> None:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

        await self.run(_close)
        self._executor.shutdown(wait=True)


class SQLiteExactCache:
    def __init__(self, database: SQLiteDatabase, clock: Callable[[], float] = time.time) -> None:
        self._db = database
        self._clock = clock

    @classmethod
    async def open(cls, data_dir: Path) -> SQLiteExactCache:
        database = SQLiteDatabase(data_dir / "gateway.sqlite3")
        await database.open(EXACT_CACHE_SCHEMA, EXACT_CACHE_MIGRATIONS)
        cache = cls(database)
        await cache.sweep_expired()
        return cache

    async def get(self, key: str) -> CachedCompletion | None:
        now = self._clock()

        def _get() -> tuple[str, str, bytes, float] | None:
            row = self._db.connection.execute(
                "SELECT tenant, model, completion, created_at FROM exact_cache "
                "WHERE key = ? AND expires_at > ?",
                (key, now),
            ).fetchone()
            return None if row is None else (row[0], row[1], row[2], row[3])

        row = await self._db.run(_get)
        if row is None:
            return None
        tenant, model, completion, created_at = row
        return CachedCompletion(
            completion=orjson.loads(completion), tenant=tenant, model=model, created_at=created_at
        )

    async def put(self, key: str, entry: CachedCompletion, ttl_seconds: int) -> None:
        payload = orjson.dumps(entry.completion)
        expires_at = self._clock() + ttl_seconds

        namespace = orjson.dumps(entry.namespace).decode()

        def _put() -> None:
            self._db.connection.execute(
                "INSERT OR REPLACE INTO exact_cache "
                "(key, tenant, model, completion, created_at, expires_at, namespace) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, entry.tenant, entry.model, payload, entry.created_at, expires_at, namespace),
            )

        await self._db.run(_put)

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
            return len(doomed)

        return await self._db.run(_purge)

    async def sweep_expired(self) -> int:
        now = self._clock()

        def _sweep() -> int:
            cursor = self._db.connection.execute(
                "DELETE FROM exact_cache WHERE expires_at <= ?", (now,)
            )
            return cursor.rowcount

        return await self._db.run(_sweep)

    async def ping(self) -> bool:
        return await self._db.ping()

    async def close(self) -> None:
        await self._db.close()
