"""The audit trail in SQLite (`audit.sqlite3` in the data directory), trimmed by count
and age on every append."""

from __future__ import annotations

from pathlib import Path

from gateway.audit_trail.records import AuditEntry, entry_from_json, entry_to_json
from gateway.storage.embedded.database import SQLiteDatabase, transaction

AUDIT_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_trail (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    action TEXT NOT NULL,
    payload BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_trail_at ON audit_trail (at);
"""


class SQLiteAuditStore:
    """`AuditStore` on its own SQLite database."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self._db = database

    @classmethod
    async def open(cls, data_dir: Path) -> SQLiteAuditStore:
        database = SQLiteDatabase(data_dir / "audit.sqlite3")
        await database.open(AUDIT_SCHEMA)
        return cls(database)

    async def append(self, entry: AuditEntry, max_entries: int, min_at: float) -> None:
        def _append() -> None:
            with transaction(self._db.connection) as connection:
                cursor = connection.execute(
                    "INSERT INTO audit_trail (at, action, payload) VALUES (?, ?, ?)",
                    (entry.at, entry.action, entry_to_json(entry)),
                )
                newest = cursor.lastrowid or 0
                connection.execute(
                    "DELETE FROM audit_trail WHERE seq <= ? OR at < ?",
                    (newest - max_entries, min_at),
                )

        await self._db.run(_append)

    async def recent(self, limit: int, action: str | None) -> list[AuditEntry]:
        def _recent() -> list[bytes]:
            if action is None:
                rows = self._db.connection.execute(
                    "SELECT payload FROM audit_trail ORDER BY seq DESC LIMIT ?", (limit,)
                ).fetchall()
            else:
                rows = self._db.connection.execute(
                    "SELECT payload FROM audit_trail WHERE action = ? ORDER BY seq DESC LIMIT ?",
                    (action, limit),
                ).fetchall()
            return [bytes(row[0]) for row in rows]

        return [entry_from_json(raw) for raw in await self._db.run(_recent)]

    async def ping(self) -> bool:
        return await self._db.ping()

    async def close(self) -> None:
        await self._db.close()
