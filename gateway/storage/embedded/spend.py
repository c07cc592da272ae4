"""Spend rows in SQLite (`spend.sqlite3` in the data directory), one per (UTC day,
tenant, key, model), added to by upsert; rows older than the retention are swept.
Protocol: `storage.protocols.SpendStore`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path

from gateway.spend.periods import MAX_RANGE_DAYS, utc_date
from gateway.spend.records import SpendRow
from gateway.storage.embedded.database import OwnedDatabase, SQLiteDatabase, transaction

SPEND_SCHEMA = """
CREATE TABLE IF NOT EXISTS spend (
    day TEXT NOT NULL,
    tenant TEXT NOT NULL,
    api_key TEXT NOT NULL,
    model TEXT NOT NULL,
    spent_usd REAL NOT NULL DEFAULT 0,
    saved_usd REAL NOT NULL DEFAULT 0,
    requests INTEGER NOT NULL DEFAULT 0,
    hits INTEGER NOT NULL DEFAULT 0,
    estimated_requests INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, tenant, api_key, model)
);
CREATE INDEX IF NOT EXISTS spend_by_tenant ON spend (tenant, day);
"""

_UPSERT = (
    "INSERT INTO spend (day, tenant, api_key, model, spent_usd, saved_usd, requests, hits, "
    "estimated_requests) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (day, tenant, api_key, model) DO UPDATE SET "
    "spent_usd = spent_usd + excluded.spent_usd, saved_usd = saved_usd + excluded.saved_usd, "
    "requests = requests + excluded.requests, hits = hits + excluded.hits, "
    "estimated_requests = estimated_requests + excluded.estimated_requests"
)


class SQLiteSpendStore(OwnedDatabase):
    def __init__(self, database: SQLiteDatabase, clock: Callable[[], float] = time.time) -> None:
        self._db = database
        self._clock = clock

    @classmethod
    async def open(cls, data_dir: Path, clock: Callable[[], float] = time.time) -> SQLiteSpendStore:
        database = SQLiteDatabase(data_dir / "spend.sqlite3")
        await database.open(SPEND_SCHEMA)
        return cls(database, clock)

    async def add(self, rows: Sequence[SpendRow]) -> None:
        values = [(*row.identity, *row.values()) for row in rows]
        if not values:
            return

        def _add() -> None:
            with transaction(self._db.connection) as connection:
                connection.executemany(_UPSERT, values)

        await self._db.run(_add)

    async def tenant_spent(
        self, tenant: str, days: Sequence[str], key: str | None = None
    ) -> dict[str, float]:
        wanted = list(days)

        def _read() -> dict[str, float]:
            spent = dict.fromkeys(wanted, 0.0)
            for day, total in self._db.connection.execute(
                "SELECT day, SUM(spent_usd) FROM spend WHERE tenant = ? AND day BETWEEN ? AND ? "
                "AND (? IS NULL OR api_key = ?) GROUP BY day",
                (tenant, min(wanted), max(wanted), key, key),
            ):
                if day in spent:  # the days asked for, not every day between them
                    spent[day] = float(total)
            return spent

        return await self._db.run(_read) if wanted else {}

    async def rows(self, days: Sequence[str], tenant: str | None = None) -> list[SpendRow]:
        wanted = list(days)

        def _read() -> list[SpendRow]:
            days_asked = set(wanted)
            query = (
                "SELECT day, tenant, api_key, model, spent_usd, saved_usd, requests, hits, "
                "estimated_requests FROM spend "
                "WHERE day BETWEEN ? AND ? AND (? IS NULL OR tenant = ?)"
            )
            found = self._db.connection.execute(query, (min(wanted), max(wanted), tenant, tenant))
            return [
                SpendRow(
                    day, tenant_, key, model, float(spent), float(saved), requests, hits, estimated
                )
                for day, tenant_, key, model, spent, saved, requests, hits, estimated in found
                if day in days_asked
            ]

        return await self._db.run(_read) if wanted else []

    async def sweep_expired(self) -> int:
        """Drops the rows of days past the retention (as long as Redis keeps them)."""
        oldest = (utc_date(self._clock()) - timedelta(days=MAX_RANGE_DAYS)).isoformat()

        def _sweep() -> int:
            cursor = self._db.connection.execute("DELETE FROM spend WHERE day < ?", (oldest,))
            return max(0, cursor.rowcount)

        return await self._db.run(_sweep)
