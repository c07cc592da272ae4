"""Embedded memory store: one SQLite file (WAL), `memory.sqlite3`, in the data directory,
shared with the session store (`sessions.py`). Like the caches, all SQLite work runs on
the database's one thread. Slightly over the ~400-line target: the schema, the quota
books and the idempotency records are written in the same transactions as the rows."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from gateway.cache.eviction import CapacityLedger
from gateway.cache.limits import StoreLimits
from gateway.memory.records import MemoryRecord, MemoryScope
from gateway.storage.embedded.database import SQLiteDatabase, transaction
from gateway.storage.embedded.sessions import SQLiteSessionStore
from gateway.storage.embedded.supersede import mark_superseded
from gateway.storage.embedded.versions import VersionMirror
from gateway.storage.protocols import (
    AlreadyWritten,
    IdempotentWrite,
    MemoryPage,
    RecordedAnswer,
    RecordFilter,
    UserQuota,
)
from gateway.storage.quota import check_quota, check_store_caps, one_owner, totals
from gateway.storage.serialise import vector_from_bytes, vector_to_bytes

MEMORY_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    user TEXT NOT NULL,
    namespace TEXT NOT NULL,
    created_at REAL NOT NULL,
    record BLOB NOT NULL,
    vector BLOB
);
CREATE INDEX IF NOT EXISTS memories_scope ON memories (tenant, user, namespace, created_at);
CREATE INDEX IF NOT EXISTS memories_tenant ON memories (tenant, created_at);
CREATE TABLE IF NOT EXISTS memory_versions (
    tenant TEXT NOT NULL,
    user TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (tenant, user)
);
CREATE TABLE IF NOT EXISTS sessions (
    tenant TEXT NOT NULL,
    user TEXT NOT NULL,
    session TEXT NOT NULL,
    items BLOB NOT NULL,
    expires_at REAL NOT NULL,
    size_bytes INTEGER NOT NULL DEFAULT 0,
    last_used_at REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, user, session)
);
CREATE INDEX IF NOT EXISTS sessions_expires ON sessions (expires_at);
-- Per-user totals for the caps; a missing row (a database from before the caps) is
-- counted from the memories on the user's next write.
CREATE TABLE IF NOT EXISTS memory_usage (
    tenant TEXT NOT NULL,
    user TEXT NOT NULL,
    count INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    PRIMARY KEY (tenant, user)
);
CREATE TABLE IF NOT EXISTS memory_idempotency (
    tenant TEXT NOT NULL,
    user TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    answer BLOB NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (tenant, user, key)
);
CREATE INDEX IF NOT EXISTS memory_idempotency_expires ON memory_idempotency (expires_at);
"""

SESSION_MIGRATIONS = (
    ("sessions", "size_bytes", "INTEGER NOT NULL DEFAULT 0"),
    ("sessions", "last_used_at", "REAL NOT NULL DEFAULT 0"),
)

# Needs the migrated columns; an older file's sessions get their size once.
SESSION_INDEXES = """
CREATE INDEX IF NOT EXISTS sessions_lru ON sessions (last_used_at);
CREATE INDEX IF NOT EXISTS sessions_tenant_lru ON sessions (tenant, last_used_at);
UPDATE sessions SET size_bytes = length(items) + length(user) + length(session)
    WHERE size_bytes = 0;
"""


def _bump_version(connection: sqlite3.Connection, tenant: str, user: str) -> None:
    connection.execute(
        "INSERT INTO memory_versions (tenant, user, version) VALUES (?, ?, 1) "
        "ON CONFLICT (tenant, user) DO UPDATE SET version = version + 1",
        (tenant, user),
    )


def _record(row: tuple[bytes, bytes | None]) -> MemoryRecord:
    return MemoryRecord.from_storage(orjson.loads(row[0]), vector_from_bytes(row[1]))


def _usage(connection: sqlite3.Connection, tenant: str, user: str) -> tuple[int, int]:
    row = connection.execute(
        "SELECT count, bytes FROM memory_usage WHERE tenant = ? AND user = ?", (tenant, user)
    ).fetchone()
    if row is not None:
        return int(row[0]), int(row[1])
    count = used = 0
    for (raw,) in connection.execute(
        "SELECT record FROM memories WHERE tenant = ? AND user = ?", (tenant, user)
    ):
        count += 1
        used += MemoryRecord.from_storage(orjson.loads(raw)).size_bytes
    return count, used


def _set_usage(
    connection: sqlite3.Connection, tenant: str, user: str, usage: tuple[int, int]
) -> None:
    connection.execute(
        "INSERT OR REPLACE INTO memory_usage (tenant, user, count, bytes) VALUES (?, ?, ?, ?)",
        (tenant, user, *usage),
    )


def _recorded(
    connection: sqlite3.Connection, tenant: str, user: str, key: str, now: float
) -> RecordedAnswer | None:
    row = connection.execute(
        "SELECT fingerprint, answer FROM memory_idempotency "
        "WHERE tenant = ? AND user = ? AND key = ? AND expires_at > ?",
        (tenant, user, key, now),
    ).fetchone()
    return None if row is None else RecordedAnswer(str(row[0]), bytes(row[1]))


class SQLiteMemoryStore:
    """With `caps` (`capacity.memories`), a write past the tenant's or the whole store's
    cap is refused. Those totals are held in memory, counted once at open from
    `memory_usage`, and changed only on the database thread."""

    def __init__(
        self,
        database: SQLiteDatabase,
        clock: Callable[[], float] = time.time,
        caps: StoreLimits | None = None,
    ) -> None:
        self._db = database
        self._clock = clock
        self._caps = caps
        self._tenant_totals: dict[str, tuple[int, int]] = {}
        self._versions = VersionMirror()  # by (tenant, user)

    @classmethod
    async def open(
        cls, database: SQLiteDatabase, caps: StoreLimits | None = None
    ) -> SQLiteMemoryStore:
        store = cls(database, caps=caps)
        await database.run(store._count_totals)
        return store

    def _count_totals(self) -> None:
        """Every user with memories gets a `memory_usage` row (a database from before
        the caps: counted once), then the per-tenant totals are summed from them."""
        with transaction(self._db.connection) as connection:
            missing = connection.execute(
                "SELECT DISTINCT tenant, user FROM memories m WHERE NOT EXISTS "
                "(SELECT 1 FROM memory_usage u WHERE u.tenant = m.tenant AND u.user = m.user)"
            ).fetchall()
            for tenant, user in missing:
                _set_usage(connection, tenant, user, _usage(connection, tenant, user))
            rows = connection.execute(
                "SELECT tenant, SUM(count), SUM(bytes) FROM memory_usage GROUP BY tenant"
            ).fetchall()
        self._tenant_totals = {str(t): (int(c), int(b)) for t, c, b in rows if int(c) > 0}

    def _all_totals(self) -> tuple[int, int]:
        return (
            sum(count for count, _ in self._tenant_totals.values()),
            sum(size for _, size in self._tenant_totals.values()),
        )

    def _change_totals(self, tenant: str, count: int, size_bytes: int) -> None:
        old_count, old_bytes = self._tenant_totals.get(tenant, (0, 0))
        if old_count + count <= 0:
            self._tenant_totals.pop(tenant, None)
        else:
            self._tenant_totals[tenant] = (old_count + count, max(0, old_bytes + size_bytes))

    async def add(
        self,
        records: Sequence[MemoryRecord],
        *,
        quota: UserQuota | None = None,
        idempotent: IdempotentWrite | None = None,
        supersedes: Mapping[str, str] | None = None,
    ) -> None:
        if not records:
            return
        constrained = quota is not None or idempotent is not None or bool(supersedes)
        owner = one_owner(records) if constrained else None
        now = self._clock()
        rows = [
            (
                record.id,
                record.tenant,
                record.user,
                record.namespace,
                record.created_at,
                orjson.dumps(record.to_storage()),
                vector_to_bytes(record.vector),
            )
            for record in records
        ]

        def _add() -> None:
            with transaction(self._db.connection) as connection:
                if idempotent is not None and owner is not None:
                    recorded = _recorded(connection, *owner, idempotent.key, now)
                    if recorded is not None:
                        raise AlreadyWritten(recorded)
                    connection.execute(
                        "INSERT OR REPLACE INTO memory_idempotency "
                        "(tenant, user, key, fingerprint, answer, expires_at) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            *owner,
                            idempotent.key,
                            idempotent.fingerprint,
                            idempotent.answer,
                            now + idempotent.ttl_seconds,
                        ),
                    )
                    # Bounded sweep of expired keys on each idempotent write: no timer.
                    connection.execute(
                        "DELETE FROM memory_idempotency WHERE rowid IN (SELECT rowid FROM "
                        "memory_idempotency WHERE expires_at <= ? LIMIT 16)",
                        (now,),
                    )
                by_owner: dict[tuple[str, str], list[MemoryRecord]] = {}
                for record in records:
                    by_owner.setdefault((record.tenant, record.user), []).append(record)
                usages: dict[tuple[str, str], tuple[int, int]] = {}
                for (tenant, user), owned in by_owner.items():
                    usages[tenant, user] = _usage(connection, tenant, user)
                    check_quota(quota, usages[tenant, user], totals(owned))
                self._check_caps(records)
                if supersedes and owner is not None:
                    mark_superseded(connection, *owner, supersedes)
                connection.executemany(
                    "INSERT INTO memories "
                    "(id, tenant, user, namespace, created_at, record, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                for (tenant, user), owned in by_owner.items():
                    count, used = usages[tenant, user]
                    added = sum(record.size_bytes for record in owned)
                    _set_usage(connection, tenant, user, (count + len(owned), used + added))
                    _bump_version(connection, tenant, user)
                    self._versions.forget((tenant, user))
            # Committed: only now do the totals move.
            for record in records:
                self._change_totals(record.tenant, 1, record.size_bytes)

        await self._db.run(_add)

    def _check_caps(self, records: Sequence[MemoryRecord]) -> None:
        if self._caps is None:
            return
        adding_by_tenant: dict[str, tuple[int, int]] = {}
        for record in records:
            count, size = adding_by_tenant.get(record.tenant, (0, 0))
            adding_by_tenant[record.tenant] = (count + 1, size + record.size_bytes)
        all_used = self._all_totals()
        adding_all = totals(records)
        for tenant, adding in adding_by_tenant.items():
            tenant_used = self._tenant_totals.get(tenant, (0, 0))
            check_store_caps(self._caps, tenant_used, all_used, adding)
        check_store_caps(self._caps, (0, 0), all_used, adding_all)

    async def recorded_answer(self, tenant: str, user: str, key: str) -> RecordedAnswer | None:
        now = self._clock()
        return await self._db.run(lambda: _recorded(self._db.connection, tenant, user, key, now))

    async def usage(self, tenant: str, user: str) -> tuple[int, int]:
        return await self._db.run(lambda: _usage(self._db.connection, tenant, user))

    async def get(self, tenant: str, memory_id: str) -> MemoryRecord | None:
        def _get() -> tuple[bytes, bytes | None] | None:
            row = self._db.connection.execute(
                "SELECT record, vector FROM memories WHERE tenant = ? AND id = ?",
                (tenant, memory_id),
            ).fetchone()
            return None if row is None else (row[0], row[1])

        row = await self._db.run(_get)
        return None if row is None else _record(row)

    async def delete(self, tenant: str, memory_id: str) -> bool:
        def _delete() -> bool:
            with transaction(self._db.connection) as connection:
                row = connection.execute(
                    "SELECT user, record FROM memories WHERE tenant = ? AND id = ?",
                    (tenant, memory_id),
                ).fetchone()
                if row is None:
                    return False
                user = str(row[0])
                count, used = _usage(connection, tenant, user)
                connection.execute(
                    "DELETE FROM memories WHERE tenant = ? AND id = ?", (tenant, memory_id)
                )
                size = MemoryRecord.from_storage(orjson.loads(row[1])).size_bytes
                _set_usage(connection, tenant, user, (max(count - 1, 0), max(used - size, 0)))
                _bump_version(connection, tenant, user)
                self._versions.forget((tenant, user))
            self._change_totals(tenant, -1, -size)
            return True

        return await self._db.run(_delete)

    async def existing(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return set()

        def _existing() -> set[str]:
            found: set[str] = set()
            # Below SQLite's default limit of 999 bound parameters per statement.
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.connection.execute(
                    f"SELECT id FROM memories WHERE tenant = ? AND id IN ({marks})",  # noqa: S608 (placeholders only)
                    (tenant, *chunk),
                )
                found.update(str(row[0]) for row in rows)
            return found

        return await self._db.run(_existing)

    async def list_page(
        self,
        tenant: str,
        user: str | None,
        namespace: str | None,
        tag: str | None,
        limit: int,
        offset: int,
        matches: RecordFilter | None = None,
    ) -> MemoryPage:
        where = ["tenant = ?"]
        params: list[Any] = [tenant]
        if user is not None:
            where.append("user = ?")
            params.append(user)
        if namespace is not None:
            where.append("namespace = ?")
            params.append(namespace)
        sql = f"SELECT record, vector FROM memories WHERE {' AND '.join(where)} "  # noqa: S608 (fixed fragments)
        sql += "ORDER BY created_at DESC, id"

        def _list() -> MemoryPage:
            matched: list[MemoryRecord] = []
            skipped = 0
            for row in self._db.connection.execute(sql, params):
                record = _record((row[0], None))
                if tag is not None and tag not in record.tags:
                    continue
                if matches is not None and not matches(record):
                    continue
                if skipped < offset:
                    skipped += 1
                    continue
                if len(matched) == limit:
                    return MemoryPage(matched, has_more=True)
                matched.append(record)
            return MemoryPage(matched, has_more=False)

        return await self._db.run(_list)

    async def in_scope(self, scope: MemoryScope) -> list[MemoryRecord]:
        sql = "SELECT record, vector FROM memories WHERE tenant = ? AND user = ?"
        params: list[Any] = [scope.tenant, scope.user]
        if scope.namespace is not None:
            sql += " AND namespace = ?"
            params.append(scope.namespace)

        def _scope() -> list[MemoryRecord]:
            return [_record((row[0], row[1])) for row in self._db.connection.execute(sql, params)]

        return await self._db.run(_scope)

    async def owners(self) -> list[tuple[str, str]]:
        def _owners() -> list[tuple[str, str]]:
            rows = self._db.connection.execute(
                "SELECT DISTINCT tenant, user FROM memories ORDER BY tenant, user"
            )
            return [(str(tenant), str(user)) for tenant, user in rows]

        return await self._db.run(_owners)

    async def scope_version(self, tenant: str, user: str) -> str:
        # Read on every turn: answered in the process while no write changed it.
        mirrored = self._versions.get((tenant, user))
        if mirrored is not None:
            return mirrored

        def _version() -> str:
            row = self._db.connection.execute(
                "SELECT version FROM memory_versions WHERE tenant = ? AND user = ?",
                (tenant, user),
            ).fetchone()
            version = "0" if row is None else str(row[0])
            self._versions.remember((tenant, user), version)
            return version

        return await self._db.run(_version)

    async def touch(self, tenant: str, memory_ids: Sequence[str], at: float) -> None:
        ids = list(memory_ids)
        if not ids:
            return

        def _touch() -> None:
            with transaction(self._db.connection) as connection:
                for memory_id in ids:
                    row = connection.execute(
                        "SELECT record FROM memories WHERE tenant = ? AND id = ?",
                        (tenant, memory_id),
                    ).fetchone()
                    if row is None:  # deleted meanwhile
                        continue
                    value = orjson.loads(row[0])
                    value["access_count"] = int(value.get("access_count") or 0) + 1
                    value["last_access_at"] = at
                    connection.execute(
                        "UPDATE memories SET record = ? WHERE tenant = ? AND id = ?",
                        (orjson.dumps(value), tenant, memory_id),
                    )

        await self._db.run(_touch)

    async def ping(self) -> bool:
        return await self._db.ping()

    async def close(self) -> None:
        """The database is shared with the session store and closed by its owner."""


async def open_embedded_memory(
    data_dir: Path,
    session_limits: StoreLimits | None = None,
    ledger: CapacityLedger | None = None,
    memory_caps: StoreLimits | None = None,
) -> tuple[SQLiteMemoryStore, SQLiteSessionStore, SQLiteDatabase]:
    """`memory_caps`: `capacity.memories` (None: only the policy's per-user caps)."""
    database = SQLiteDatabase(data_dir / "memory.sqlite3")
    await database.open(MEMORY_SCHEMA, SESSION_MIGRATIONS, SESSION_INDEXES)
    sessions = SQLiteSessionStore(database, limits=session_limits, ledger=ledger)
    await sessions.enforce_limits()
    return await SQLiteMemoryStore.open(database, memory_caps), sessions, database
