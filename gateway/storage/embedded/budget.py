"""Caps for one SQLite table of tenant-owned entries, evicting the least recently used.

The table needs `tenant`, `size_bytes` and `last_used_at` columns and an index on
`last_used_at` and on `(tenant, last_used_at)`. Entry and byte totals are kept in memory
(counted once at open), so a write checks its caps without a COUNT over the table; the
eviction itself is an indexed scan from the oldest row.

All methods run on the database's worker thread, with the connection that owns the
table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable

from gateway.cache.eviction import CapacityLedger, EvictionReason
from gateway.cache.limits import StoreLimits

# Rows read per eviction query: a write over the cap usually frees one or two.
_EVICTION_BATCH = 32
# Expired rows deleted per sweep step: each step is one job on the database thread, so
# requests are served between steps of a large sweep.
SWEEP_BATCH = 1000


class TableBudget:
    def __init__(
        self,
        table: str,
        store: str,
        limits: StoreLimits,
        ledger: CapacityLedger | None,
        key_column: str | None = None,
    ) -> None:
        """`key_column`: the evicted rows' keys are kept for `drain_evicted` (a store
        that holds some of its rows in memory too must drop them)."""
        self._table = table
        self._key_column = key_column
        self._evicted_keys: list[str] = []
        self._store = store
        self._limits = limits
        self._ledger = ledger
        self._entries: dict[str, int] = {}
        self._bytes: dict[str, int] = {}
        # False until the first recount, and again after a rolled-back write (whose
        # in-memory changes to the totals the table no longer has).
        self._counted = False

    @property
    def entries(self) -> int:
        return sum(self._entries.values())

    @property
    def size_bytes(self) -> int:
        return sum(self._bytes.values())

    def tenant_usage(self, tenant: str) -> tuple[int, int]:
        return self._entries.get(tenant, 0), self._bytes.get(tenant, 0)

    def ensure_counted(self, connection: sqlite3.Connection) -> None:
        """Recount unless the totals are known (before a write)."""
        if not self._counted:
            self.recount(connection)

    def forget_counts(self) -> None:
        """A write was rolled back: recount before the next one."""
        self._counted = False

    def recount(self, connection: sqlite3.Connection) -> None:
        """Totals from the table itself: at open, and after bulk deletes (purge, sweep)."""
        self._counted = True
        self._entries.clear()
        self._bytes.clear()
        for tenant, count, size in connection.execute(
            f"SELECT tenant, COUNT(*), COALESCE(SUM(size_bytes), 0) FROM {self._table} "  # noqa: S608 (fixed table name)
            "GROUP BY tenant"
        ):
            self._entries[tenant] = int(count)
            self._bytes[tenant] = int(size)
        self._publish()

    def added(self, tenant: str, size_bytes: int, replaced: tuple[str, int] | None) -> None:
        """One row written; `replaced`: (tenant, size) of the row it overwrote."""
        if replaced is not None:
            self._change(replaced[0], -1, -replaced[1])
        self._change(tenant, 1, size_bytes)
        self._publish()

    def removed(self, tenant: str, size_bytes: int) -> None:
        self._change(tenant, -1, -size_bytes)
        self._publish()

    def enforce(self, connection: sqlite3.Connection, tenant: str) -> int:
        """Evict until `tenant` and the whole table are within their caps; returns how
        many rows went."""
        limits = self._limits
        evicted = 0
        per_tenant = limits.max_entries_per_tenant is not None or (
            limits.max_bytes_per_tenant is not None
        )
        while per_tenant and self._over(tenant, limits.tenant_entries(), limits.tenant_bytes()):
            freed = self._evict_oldest(connection, tenant, EvictionReason.TENANT_CAPACITY)
            if not freed:
                break
            evicted += freed
        while self._over(None, limits.max_entries, limits.max_bytes):
            freed = self._evict_oldest(connection, None, EvictionReason.CAPACITY)
            if not freed:
                break
            evicted += freed
        if evicted:
            self._publish()
        return evicted

    def enforce_all(self, connection: sqlite3.Connection) -> int:
        """Every tenant's cap and the global one: at open, when caps may have been
        lowered since the last run."""
        return sum(self.enforce(connection, tenant) for tenant in list(self._entries)) + (
            self.enforce(connection, "")
        )

    def sweep_step(self, connection: sqlite3.Connection, now: float) -> int:
        """Delete up to `SWEEP_BATCH` rows expired by `now`; returns how many went (fewer
        than the batch: the sweep is done)."""
        swept = connection.execute(
            f"DELETE FROM {self._table} WHERE rowid IN "  # noqa: S608
            f"(SELECT rowid FROM {self._table} WHERE expires_at <= ? LIMIT ?) "
            "RETURNING tenant, size_bytes",
            (now, SWEEP_BATCH),
        ).fetchall()
        for tenant, size in swept:
            self._change(tenant, -1, -int(size))
        self.expired(len(swept))
        self._publish()
        return len(swept)

    def expired(self, count: int) -> None:
        if self._ledger is not None:
            self._ledger.evicted(self._store, EvictionReason.EXPIRED, count)

    def _over(self, tenant: str | None, max_entries: int, max_bytes: int) -> bool:
        if tenant is None:
            return self.entries > max_entries or self.size_bytes > max_bytes
        entries, size = self.tenant_usage(tenant)
        return entries > max_entries or size > max_bytes

    def _evict_oldest(
        self, connection: sqlite3.Connection, tenant: str | None, reason: EvictionReason
    ) -> int:
        limits = self._limits
        columns = f"rowid, tenant, size_bytes, {self._key_column or 'NULL'}"
        if tenant is None:
            rows = connection.execute(
                f"SELECT {columns} FROM {self._table} "  # noqa: S608
                "ORDER BY last_used_at LIMIT ?",
                (_EVICTION_BATCH,),
            ).fetchall()
        else:
            rows = connection.execute(
                f"SELECT {columns} FROM {self._table} "  # noqa: S608
                "WHERE tenant = ? ORDER BY last_used_at LIMIT ?",
                (tenant, _EVICTION_BATCH),
            ).fetchall()
        doomed: list[tuple[int]] = []
        for rowid, owner, size, key in rows:
            if tenant is None:
                if not self._over(None, limits.max_entries, limits.max_bytes):
                    break
            elif not self._over(tenant, limits.tenant_entries(), limits.tenant_bytes()):
                break
            doomed.append((rowid,))
            if key is not None:
                self._evicted_keys.append(str(key))
            self._change(owner, -1, -int(size))
        connection.executemany(f"DELETE FROM {self._table} WHERE rowid = ?", doomed)  # noqa: S608
        if self._ledger is not None:
            self._ledger.evicted(self._store, reason, len(doomed))
        return len(doomed)

    def drain_evicted(self) -> list[str]:
        """The keys evicted since the last call (with a `key_column`)."""
        keys, self._evicted_keys = self._evicted_keys, []
        return keys

    def _change(self, tenant: str, entries: int, size_bytes: int) -> None:
        left = self._entries.get(tenant, 0) + entries
        if left <= 0:
            self._entries.pop(tenant, None)
            self._bytes.pop(tenant, None)
            return
        self._entries[tenant] = left
        self._bytes[tenant] = max(0, self._bytes.get(tenant, 0) + size_bytes)

    def _publish(self) -> None:
        if self._ledger is not None:
            self._ledger.set_usage(self._store, self.entries, self.size_bytes)


async def sweep_in_steps(run_step: Callable[[], Awaitable[int]]) -> int:
    """Run sweep steps (each one transaction of at most `SWEEP_BATCH` deletions, so
    requests are served between them) until one deletes less than a batch; returns
    how many rows went in all."""
    deleted = 0
    while True:
        swept = await run_step()
        deleted += swept
        if swept < SWEEP_BATCH:
            return deleted
