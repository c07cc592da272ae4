"""The tool-result cache in SQLite (`tool_cache.sqlite3` in the data directory).

One row per (tenant, key). A read ignores an expired row; the background sweep deletes
them (`sweep_expired`). Past the `capacity.tool_cache` caps the least recently used rows
go first (`TableBudget`); a hit stamps its row's `last_used_at`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from gateway.cache.eviction import CapacityLedger
from gateway.cache.limits import StoreLimits
from gateway.storage.embedded.budget import TableBudget, sweep_in_steps
from gateway.storage.embedded.database import OwnedDatabase, SQLiteDatabase, transaction
from gateway.toolcache.records import ToolCacheEntry, ToolCacheFilter

TOOL_CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_cache (
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    namespace TEXT NOT NULL,
    tool TEXT NOT NULL,
    method TEXT NOT NULL,
    target TEXT NOT NULL,
    result BLOB NOT NULL,
    stored_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    size_bytes INTEGER NOT NULL,
    last_used_at REAL NOT NULL,
    PRIMARY KEY (tenant, key)
);
CREATE INDEX IF NOT EXISTS tool_cache_expires ON tool_cache (expires_at);
CREATE INDEX IF NOT EXISTS tool_cache_lru ON tool_cache (last_used_at);
CREATE INDEX IF NOT EXISTS tool_cache_tenant_lru ON tool_cache (tenant, last_used_at);
CREATE INDEX IF NOT EXISTS tool_cache_tool ON tool_cache (tenant, tool, target);
"""

_COLUMNS = "key, tenant, namespace, tool, method, target, result, stored_at, expires_at"


class SQLiteToolCache(OwnedDatabase):
    """`ToolCacheStore` on its own SQLite database."""

    def __init__(
        self,
        database: SQLiteDatabase,
        limits: StoreLimits,
        ledger: CapacityLedger | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = database
        self._clock = clock
        self._budget = TableBudget("tool_cache", "tool_cache", limits, ledger)

    @classmethod
    async def open(
        cls,
        data_dir: Path,
        limits: StoreLimits,
        ledger: CapacityLedger | None = None,
        clock: Callable[[], float] = time.time,
    ) -> SQLiteToolCache:
        database = SQLiteDatabase(data_dir / "tool_cache.sqlite3")
        await database.open(TOOL_CACHE_SCHEMA)
        store = cls(database, limits, ledger, clock)
        await store.sweep_expired()
        # A cap lowered since the last run applies at once.
        await database.run(store._enforce_all)
        return store

    def _enforce_all(self) -> None:
        connection = self._db.connection
        self._budget.ensure_counted(connection)
        try:
            with transaction(connection):
                self._budget.enforce_all(connection)
        except BaseException:
            self._budget.forget_counts()
            raise

    async def get(self, tenant: str, key: str) -> ToolCacheEntry | None:
        now = self._clock()

        def _get() -> tuple[str, str, str, str, str, str, bytes, float, float] | None:
            connection = self._db.connection
            row = connection.execute(
                f"SELECT {_COLUMNS} FROM tool_cache "  # noqa: S608 (fixed column list)
                "WHERE tenant = ? AND key = ? AND expires_at > ?",
                (tenant, key, now),
            ).fetchone()
            if row is not None:
                connection.execute(
                    "UPDATE tool_cache SET last_used_at = ? WHERE tenant = ? AND key = ?",
                    (now, tenant, key),
                )
            return None if row is None else tuple(row)

        row = await self._db.run(_get)
        if row is None:
            return None
        return ToolCacheEntry(
            key=row[0],
            tenant=row[1],
            namespace=row[2],
            tool=row[3],
            method=row[4],
            target=row[5],
            result=bytes(row[6]),
            stored_at=float(row[7]),
            expires_at=float(row[8]),
        )

    async def put(self, entry: ToolCacheEntry) -> None:
        now = self._clock()
        size_bytes = entry.size_bytes

        def _write(connection: sqlite3.Connection) -> None:
            previous = connection.execute(
                "SELECT tenant, size_bytes FROM tool_cache WHERE tenant = ? AND key = ?",
                (entry.tenant, entry.key),
            ).fetchone()
            connection.execute(
                f"INSERT OR REPLACE INTO tool_cache ({_COLUMNS}, size_bytes, last_used_at) "  # noqa: S608
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    entry.key,
                    entry.tenant,
                    entry.namespace,
                    entry.tool,
                    entry.method,
                    entry.target,
                    entry.result,
                    entry.stored_at,
                    entry.expires_at,
                    size_bytes,
                    now,
                ),
            )
            self._budget.added(
                entry.tenant, size_bytes, None if previous is None else (previous[0], previous[1])
            )
            self._budget.enforce(connection, entry.tenant)

        def _put() -> None:
            connection = self._db.connection
            self._budget.ensure_counted(connection)
            try:
                with transaction(connection):
                    _write(connection)
            except BaseException:
                self._budget.forget_counts()  # the totals changed with the rolled-back write
                raise

        await self._db.run(_put)

    async def delete(self, tool_filter: ToolCacheFilter) -> int:
        clauses, values = _filter_clauses(tool_filter)

        def _delete() -> int:
            connection = self._db.connection
            self._budget.ensure_counted(connection)
            removed = connection.execute(
                f"DELETE FROM tool_cache WHERE {' AND '.join(clauses)} "  # noqa: S608 (fixed clauses)
                "RETURNING tenant, size_bytes",
                values,
            ).fetchall()
            for tenant, size in removed:
                self._budget.removed(tenant, int(size))
            return len(removed)

        return await self._db.run(_delete)

    async def sweep_expired(self) -> int:
        now = self._clock()

        def _step() -> int:
            self._budget.ensure_counted(self._db.connection)
            return self._budget.sweep_step(self._db.connection, now)

        return await sweep_in_steps(lambda: self._db.run(_step))


def _filter_clauses(tool_filter: ToolCacheFilter) -> tuple[list[str], list[object]]:
    clauses: list[str] = ["tenant = ?"]
    values: list[object] = [tool_filter.tenant]
    for column, value in (
        ("namespace", tool_filter.namespace),
        ("tool", tool_filter.tool),
        ("method", tool_filter.method),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            values.append(value)
    if tool_filter.target_prefix is not None:
        # substr, not LIKE: a prefix holding % or _ matches only itself.
        clauses.append("substr(target, 1, ?) = ?")
        values.extend((len(tool_filter.target_prefix), tool_filter.target_prefix))
    return clauses, values
