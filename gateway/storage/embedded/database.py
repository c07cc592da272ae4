"""One SQLite connection owned by one worker thread: what every embedded store runs on.

All SQLite work runs on the database's dedicated thread: the event loop never blocks on
disk, and the single connection needs no locking. Failures come back as the storage
layer's `StoreUnavailable`, so nothing above `storage/` handles sqlite3 types.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from gateway.storage.protocols import StoreUnavailable

T = TypeVar("T")


class SQLiteDatabase:
    """One SQLite connection owned by one worker thread."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        self._connection: sqlite3.Connection | None = None

    async def open(
        self,
        schema: str,
        migrations: tuple[tuple[str, str, str], ...] = (),
        after_migrations: str = "",
    ) -> None:
        """`migrations`: (table, column, definition) added when an older file lacks
        them, so a data directory written by an older version keeps working;
        `after_migrations`: a script that needs those columns (their indexes)."""

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
            if after_migrations:
                connection.executescript(after_migrations)
            self._connection = connection

        # Untranslated: a data directory that cannot be opened stops start-up with the
        # real cause.
        await asyncio.get_running_loop().run_in_executor(self._executor, _open)

    async def run(self, work: Callable[[], T]) -> T:
        """`work` on the database's thread. SQLite and disk errors (closed, locked, out of
        disk) come back as `StoreUnavailable`, the cause chained."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, work)
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailable(f"{self._path.name}: {type(exc).__name__}") from exc

    @property
    def connection(self) -> sqlite3.Connection:
        if self._connection is None:
            # A sqlite3 error, so `run` reports "closed" like any other store failure.
            raise sqlite3.ProgrammingError("database is not open")
        return self._connection

    @property
    def is_open(self) -> bool:
        return self._connection is not None

    async def ping(self) -> bool:
        """Whether the database answers; False once closed or broken."""

        def _ping() -> bool:
            self.connection.execute("SELECT 1").fetchone()
            return True

        try:
            return await self.run(_ping)
        except (StoreUnavailable, RuntimeError):  # broken, or closed (executor shut down)
            return False

    async def close(self) -> None:
        def _close() -> None:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

        await self.run(_close)
        self._executor.shutdown(wait=True)


@contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """All or nothing. The connection is in autocommit mode (`isolation_level=None`),
    where `with connection:` would not open a transaction, so BEGIN explicitly."""
    connection.execute("BEGIN")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


class OwnedDatabase:
    """For a store that owns one SQLite database: `/readyz` pings it and `close` closes
    it, once (closing twice is harmless)."""

    _db: SQLiteDatabase
    _closed: bool = False

    async def ping(self) -> bool:
        return await self._db.ping()

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._db.close()
