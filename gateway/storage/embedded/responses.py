"""Stored Responses API responses in SQLite (`responses.sqlite3` in the data directory),
per tenant, each with its own expiry (`responses.ttl_seconds`).

One row per (tenant, response id): the response object and the conversation's input
items as one orjson document. A read ignores an expired row; the background sweep
deletes them. Nothing caps the table but the TTL: these are the clients' conversations,
which must not vanish to make room for others' (a cache entry may; a stored response
that a follow-up names may not).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from gateway.storage.embedded.database import OwnedDatabase, SQLiteDatabase
from gateway.storage.protocols import StoredResponse
from gateway.storage.serialise import decode_stored_response, encode_stored_response

RESPONSES_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    payload BLOB NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS responses_expiry ON responses (expires_at);
"""


class SQLiteResponseStore(OwnedDatabase):
    """`ResponseStore` on its own SQLite database."""

    def __init__(self, database: SQLiteDatabase, clock: Callable[[], float] = time.time) -> None:
        self._db = database
        self._clock = clock

    @classmethod
    async def open(
        cls, data_dir: Path, clock: Callable[[], float] = time.time
    ) -> SQLiteResponseStore:
        database = SQLiteDatabase(data_dir / "responses.sqlite3")
        await database.open(RESPONSES_SCHEMA)
        return cls(database, clock)

    async def put(
        self, tenant: str, response_id: str, stored: StoredResponse, ttl_seconds: int
    ) -> None:
        payload = encode_stored_response(stored)
        now = self._clock()

        def _put() -> None:
            self._db.connection.execute(
                "INSERT OR REPLACE INTO responses (tenant, id, payload, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (tenant, response_id, payload, now, now + ttl_seconds),
            )

        await self._db.run(_put)

    async def get(self, tenant: str, response_id: str) -> StoredResponse | None:
        now = self._clock()

        def _get() -> bytes | None:
            row = self._db.connection.execute(
                "SELECT payload FROM responses WHERE tenant = ? AND id = ? AND expires_at > ?",
                (tenant, response_id, now),
            ).fetchone()
            return None if row is None else bytes(row[0])

        raw = await self._db.run(_get)
        return None if raw is None else decode_stored_response(raw)

    async def delete(self, tenant: str, response_id: str) -> bool:
        now = self._clock()

        def _delete() -> bool:
            # An expired row counts as absent, as for `get`.
            cursor = self._db.connection.execute(
                "DELETE FROM responses WHERE tenant = ? AND id = ? AND expires_at > ?",
                (tenant, response_id, now),
            )
            return cursor.rowcount > 0

        return await self._db.run(_delete)

    async def sweep_expired(self) -> int:
        now = self._clock()

        def _sweep() -> int:
            cursor = self._db.connection.execute(
                "DELETE FROM responses WHERE expires_at <= ?", (now,)
            )
            return max(0, cursor.rowcount)

        return await self._db.run(_sweep)
