"""Embedded knowledge store: `knowledge.sqlite3` in the data directory, one row per item
(the record as JSON, the vector as bytes) and a version counter per tenant, bumped in
the same transaction as every add and delete. All SQLite work runs on the database's
one thread."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from gateway.knowledge.records import KnowledgeRecord, KnowledgeScope
from gateway.storage.agent_protocols import KnowledgePage
from gateway.storage.embedded.database import OwnedDatabase, SQLiteDatabase, transaction
from gateway.storage.embedded.versions import VersionMirror
from gateway.storage.protocols import QuotaExceeded
from gateway.storage.serialise import vector_from_bytes, vector_to_bytes

KNOWLEDGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS knowledge (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    namespace TEXT NOT NULL,
    document_id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    created_at REAL NOT NULL,
    record BLOB NOT NULL,
    vector BLOB
);
CREATE INDEX IF NOT EXISTS knowledge_scope ON knowledge (tenant, namespace);
CREATE INDEX IF NOT EXISTS knowledge_document ON knowledge (tenant, document_id);
CREATE TABLE IF NOT EXISTS knowledge_versions (
    tenant TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);
"""

_ORDER = "ORDER BY created_at DESC, document_id, chunk, id"


def _bump(connection: sqlite3.Connection, tenant: str) -> None:
    connection.execute(
        "INSERT INTO knowledge_versions (tenant, version) VALUES (?, 1) "
        "ON CONFLICT (tenant) DO UPDATE SET version = version + 1",
        (tenant,),
    )


def _record(raw: bytes, vector: bytes | None = None) -> KnowledgeRecord:
    return KnowledgeRecord.from_storage(orjson.loads(raw), vector_from_bytes(vector))


def _count(connection: sqlite3.Connection, tenant: str) -> int:
    row = connection.execute("SELECT COUNT(*) FROM knowledge WHERE tenant = ?", (tenant,))
    return int(row.fetchone()[0])


class SQLiteKnowledgeStore(OwnedDatabase):
    """`KnowledgeStore` on its own SQLite database."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self._db = database
        self._versions = VersionMirror()  # by tenant

    @classmethod
    async def open(cls, data_dir: Path) -> SQLiteKnowledgeStore:
        database = SQLiteDatabase(data_dir / "knowledge.sqlite3")
        await database.open(KNOWLEDGE_SCHEMA)
        return cls(database)

    async def add(
        self, records: Sequence[KnowledgeRecord], *, max_items: int, replaces: str | None = None
    ) -> None:
        if not records:
            return
        tenants = {record.tenant for record in records}
        if len(tenants) != 1:
            raise ValueError("one write holds the items of one tenant")
        tenant = tenants.pop()
        rows = [
            (
                record.id,
                record.tenant,
                record.namespace,
                record.document_id,
                record.chunk,
                record.created_at,
                orjson.dumps(record.to_storage()),
                vector_to_bytes(record.vector),
            )
            for record in records
        ]

        def _add() -> None:
            with transaction(self._db.connection) as connection:
                if replaces is not None:
                    connection.execute(
                        "DELETE FROM knowledge WHERE tenant = ? AND document_id = ?",
                        (tenant, replaces),
                    )
                used = _count(connection, tenant)
                if used + len(rows) > max_items:
                    raise QuotaExceeded("count", used, len(rows), max_items, scope="tenant")
                connection.executemany(
                    "INSERT INTO knowledge (id, tenant, namespace, document_id, chunk, "
                    "created_at, record, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                _bump(connection, tenant)
                self._versions.forget(tenant)

        await self._db.run(_add)

    async def get(self, tenant: str, item_id: str) -> KnowledgeRecord | None:
        def _get() -> tuple[bytes, bytes | None] | None:
            row = self._db.connection.execute(
                "SELECT record, vector FROM knowledge WHERE tenant = ? AND id = ?",
                (tenant, item_id),
            ).fetchone()
            return None if row is None else (row[0], row[1])

        row = await self._db.run(_get)
        return None if row is None else _record(*row)

    async def delete(self, tenant: str, item_id: str) -> bool:
        def _delete() -> bool:
            with transaction(self._db.connection) as connection:
                cursor = connection.execute(
                    "DELETE FROM knowledge WHERE tenant = ? AND id = ?", (tenant, item_id)
                )
                if cursor.rowcount <= 0:
                    return False
                _bump(connection, tenant)
                self._versions.forget(tenant)
                return True

        return await self._db.run(_delete)

    async def delete_document(self, tenant: str, document_id: str) -> list[str]:
        def _delete() -> list[str]:
            with transaction(self._db.connection) as connection:
                ids = [
                    str(row[0])
                    for row in connection.execute(
                        "SELECT id FROM knowledge WHERE tenant = ? AND document_id = ?",
                        (tenant, document_id),
                    )
                ]
                if ids:
                    connection.execute(
                        "DELETE FROM knowledge WHERE tenant = ? AND document_id = ?",
                        (tenant, document_id),
                    )
                    _bump(connection, tenant)
                    self._versions.forget(tenant)
                return ids

        return await self._db.run(_delete)

    async def list_page(
        self,
        tenant: str,
        namespace: str | None,
        document_id: str | None,
        limit: int,
        offset: int,
    ) -> KnowledgePage:
        where = ["tenant = ?"]
        params: list[Any] = [tenant]
        if namespace is not None:
            where.append("namespace = ?")
            params.append(namespace)
        if document_id is not None:
            where.append("document_id = ?")
            params.append(document_id)
        sql = f"SELECT record FROM knowledge WHERE {' AND '.join(where)} {_ORDER} LIMIT ? OFFSET ?"  # noqa: S608 (fixed fragments)
        params += [limit + 1, offset]

        def _list() -> KnowledgePage:
            rows = self._db.connection.execute(sql, params).fetchall()
            records = [_record(row[0]) for row in rows[:limit]]
            return KnowledgePage(records, has_more=len(rows) > limit)

        return await self._db.run(_list)

    async def in_scope(self, scope: KnowledgeScope) -> list[KnowledgeRecord]:
        namespaces = ("", scope.namespace or "")

        def _scope() -> list[KnowledgeRecord]:
            rows = self._db.connection.execute(
                "SELECT record, vector FROM knowledge WHERE tenant = ? AND namespace IN (?, ?)",
                (scope.tenant, *namespaces),
            )
            return [_record(row[0], row[1]) for row in rows]

        return await self._db.run(_scope)

    async def version(self, tenant: str) -> str:
        # Read on every turn: answered in the process while no write changed it.
        mirrored = self._versions.get(tenant)
        if mirrored is not None:
            return mirrored

        def _version() -> str:
            row = self._db.connection.execute(
                "SELECT version FROM knowledge_versions WHERE tenant = ?", (tenant,)
            ).fetchone()
            version = "0" if row is None else str(row[0])
            self._versions.remember(tenant, version)
            return version

        return await self._db.run(_version)

    async def count(self, tenant: str) -> int:
        return await self._db.run(lambda: _count(self._db.connection, tenant))
