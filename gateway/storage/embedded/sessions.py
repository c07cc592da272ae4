"""Embedded session store (the per-session knowledge cache): the `sessions` table of
`memory.sqlite3`, on the memory database's thread."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from gateway.cache.eviction import CapacityLedger
from gateway.cache.limits import StoreLimits
from gateway.storage.embedded.budget import TableBudget, sweep_in_steps
from gateway.storage.embedded.database import SQLiteDatabase, transaction
from gateway.storage.protocols import SessionItem
from gateway.storage.serialise import session_items_from_json, session_items_to_json


class SQLiteSessionStore:
    """Sessions past `capacity.sessions` are evicted least recently written first."""

    def __init__(
        self,
        database: SQLiteDatabase,
        clock: Callable[[], float] = time.time,
        limits: StoreLimits | None = None,
        ledger: CapacityLedger | None = None,
    ) -> None:
        self._db = database
        self._clock = clock
        self._budget = TableBudget("sessions", "sessions", limits or StoreLimits(), ledger)

    async def enforce_limits(self) -> None:
        """Apply the caps to what is already stored (at open: they may be lower now)."""

        def _enforce() -> None:
            self._budget.ensure_counted(self._db.connection)
            self._budget.enforce_all(self._db.connection)

        await self._db.run(_enforce)

    async def sweep_expired(self) -> int:
        now = self._clock()

        def _step() -> int:
            self._budget.ensure_counted(self._db.connection)
            return self._budget.sweep_step(self._db.connection, now)

        return await sweep_in_steps(lambda: self._db.run(_step))

    async def load(self, tenant: str, user: str, session: str) -> list[SessionItem]:
        now = self._clock()

        def _load() -> bytes | None:
            row = self._db.connection.execute(
                "SELECT items FROM sessions WHERE tenant = ? AND user = ? AND session = ? "
                "AND expires_at > ?",
                (tenant, user, session, now),
            ).fetchone()
            return None if row is None else bytes(row[0])

        raw = await self._db.run(_load)
        return [] if raw is None else session_items_from_json(raw)

    async def save(
        self, tenant: str, user: str, session: str, items: Sequence[SessionItem], ttl_seconds: int
    ) -> None:
        payload = session_items_to_json(items)
        now = self._clock()
        size_bytes = len(payload) + len(user.encode()) + len(session.encode())

        def _save() -> None:
            self._budget.ensure_counted(self._db.connection)
            try:
                _write()
            except BaseException:
                self._budget.forget_counts()
                raise

        def _write() -> None:
            with transaction(self._db.connection) as connection:
                previous = connection.execute(
                    "SELECT size_bytes FROM sessions WHERE tenant = ? AND user = ? AND session = ?",
                    (tenant, user, session),
                ).fetchone()
                connection.execute(
                    "INSERT OR REPLACE INTO sessions "
                    "(tenant, user, session, items, expires_at, size_bytes, last_used_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (tenant, user, session, payload, now + ttl_seconds, size_bytes, now),
                )
                self._budget.added(
                    tenant, size_bytes, None if previous is None else (tenant, previous[0])
                )
                # Sweep a few expired sessions on each write: bounded work, no timer.
                swept = connection.execute(
                    "DELETE FROM sessions WHERE rowid IN "
                    "(SELECT rowid FROM sessions WHERE expires_at <= ? LIMIT 16) "
                    "RETURNING tenant, size_bytes",
                    (now,),
                ).fetchall()
                for owner, size in swept:
                    self._budget.removed(owner, int(size))
                self._budget.expired(len(swept))
                self._budget.enforce(connection, tenant)

        await self._db.run(_save)

    async def forget(self, tenant: str, user: str, memory_ids: Sequence[str]) -> None:
        ids = set(memory_ids)
        if not ids:
            return

        def _forget() -> None:
            with transaction(self._db.connection) as connection:
                rows = connection.execute(
                    "SELECT session, items FROM sessions WHERE tenant = ? AND user = ?",
                    (tenant, user),
                ).fetchall()
                for session, raw in rows:
                    items = session_items_from_json(bytes(raw))
                    kept = [item for item in items if item.memory_id not in ids]
                    if len(kept) != len(items):
                        connection.execute(
                            "UPDATE sessions SET items = ? "
                            "WHERE tenant = ? AND user = ? AND session = ?",
                            (session_items_to_json(kept), tenant, user, session),
                        )

        await self._db.run(_forget)

    async def close(self) -> None:
        """See `SQLiteMemoryStore.close`."""
