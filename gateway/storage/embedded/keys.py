"""Runtime API keys in SQLite (`keys.sqlite3` in the data directory): one row per key,
found by the SHA-256 of its secret. One process: the version counter lives in memory
and is bumped by every write (the process that wrote also forgets at once)."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from gateway.keys.records import RuntimeKey, key_from_json, key_to_json
from gateway.storage.embedded.database import SQLiteDatabase, transaction

KEYS_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    digest TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    payload BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS api_keys_tenant ON api_keys (tenant, created_at);
"""


def _insert(connection: sqlite3.Connection, key: RuntimeKey) -> None:
    connection.execute(
        "INSERT INTO api_keys (id, tenant, digest, created_at, payload) VALUES (?, ?, ?, ?, ?)",
        (key.key_id, key.tenant, key.digest_hex, key.created_at, key_to_json(key)),
    )


class SQLiteKeyStore:
    """`KeyStore` on its own SQLite database."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self._db = database
        self._version = 0

    @classmethod
    async def open(cls, data_dir: Path) -> SQLiteKeyStore:
        database = SQLiteDatabase(data_dir / "keys.sqlite3")
        await database.open(KEYS_SCHEMA)
        return cls(database)

    async def add(self, key: RuntimeKey) -> None:
        def _add() -> None:
            _insert(self._db.connection, key)

        await self._db.run(_add)
        self._version += 1

    async def _one(self, by_digest: bool, value: str) -> RuntimeKey | None:
        query = (
            "SELECT payload FROM api_keys WHERE digest = ?"
            if by_digest
            else "SELECT payload FROM api_keys WHERE id = ?"
        )

        def _get() -> bytes | None:
            row = self._db.connection.execute(query, (value,)).fetchone()
            return None if row is None else bytes(row[0])

        raw = await self._db.run(_get)
        return None if raw is None else key_from_json(raw)

    async def get(self, key_id: str) -> RuntimeKey | None:
        return await self._one(False, key_id)

    async def find(self, digest_hex: str) -> RuntimeKey | None:
        return await self._one(True, digest_hex)

    async def list(self, tenant: str | None) -> list[RuntimeKey]:
        def _list() -> list[bytes]:
            if tenant is None:
                rows = self._db.connection.execute(
                    "SELECT payload FROM api_keys ORDER BY created_at, id"
                ).fetchall()
            else:
                rows = self._db.connection.execute(
                    "SELECT payload FROM api_keys WHERE tenant = ? ORDER BY created_at, id",
                    (tenant,),
                ).fetchall()
            return [bytes(row[0]) for row in rows]

        return [key_from_json(raw) for raw in await self._db.run(_list)]

    async def revoke(self, key_id: str, at: float) -> RuntimeKey | None:
        def _revoke() -> RuntimeKey | None:
            with transaction(self._db.connection) as connection:
                row = connection.execute(
                    "SELECT payload FROM api_keys WHERE id = ?", (key_id,)
                ).fetchone()
                if row is None:
                    return None
                key = _stopped(key_from_json(bytes(row[0])), at)
                connection.execute(
                    "UPDATE api_keys SET payload = ? WHERE id = ?", (key_to_json(key), key_id)
                )
                return key

        key = await self._db.run(_revoke)
        self._version += 1
        return key

    async def rotate(self, key_id: str, new_key: RuntimeKey, old_stops_at: float) -> bool:
        def _rotate() -> bool:
            with transaction(self._db.connection) as connection:
                row = connection.execute(
                    "SELECT payload FROM api_keys WHERE id = ?", (key_id,)
                ).fetchone()
                if row is None:
                    return False
                old = _stopped(key_from_json(bytes(row[0])), old_stops_at)
                connection.execute(
                    "UPDATE api_keys SET payload = ? WHERE id = ?", (key_to_json(old), key_id)
                )
                _insert(connection, new_key)
                return True

        rotated = await self._db.run(_rotate)
        self._version += 1
        return rotated

    async def version(self) -> int:
        return self._version

    async def ping(self) -> bool:
        return await self._db.ping()

    async def close(self) -> None:
        await self._db.close()


def _stopped(key: RuntimeKey, at: float) -> RuntimeKey:
    """`key` stopping at `at`, or at its earlier stop if it has one."""
    stop = at if key.revoked_at is None else min(key.revoked_at, at)
    return replace(key, revoked_at=stop)
