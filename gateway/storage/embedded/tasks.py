"""Task state in SQLite (`tasks.sqlite3` in the data directory): one row per (tenant,
user, task id) holding the task's JSON document, its status and revision beside it for
listing and compare-and-set. Nothing evicts a task: the per-user cap bounds the table.
"""

from __future__ import annotations

from pathlib import Path

from gateway.storage.agent_protocols import TaskCreated
from gateway.storage.embedded.database import OwnedDatabase, SQLiteDatabase, transaction
from gateway.tasks.records import TaskRecord, TaskStatus, task_from_json, task_to_json

TASKS_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    tenant TEXT NOT NULL,
    user TEXT NOT NULL,
    id TEXT NOT NULL,
    status TEXT NOT NULL,
    updated_at REAL NOT NULL,
    revision INTEGER NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (tenant, user, id)
);
"""


class SQLiteTaskStore(OwnedDatabase):
    """`TaskStore` on its own SQLite database."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self._db = database

    @classmethod
    async def open(cls, data_dir: Path) -> SQLiteTaskStore:
        database = SQLiteDatabase(data_dir / "tasks.sqlite3")
        await database.open(TASKS_SCHEMA)
        return cls(database)

    async def get(self, tenant: str, user: str, task_id: str) -> TaskRecord | None:
        def _get() -> bytes | None:
            row = self._db.connection.execute(
                "SELECT payload FROM tasks WHERE tenant = ? AND user = ? AND id = ?",
                (tenant, user, task_id),
            ).fetchone()
            return None if row is None else bytes(row[0])

        raw = await self._db.run(_get)
        return None if raw is None else task_from_json(tenant, user, raw)

    async def create(self, record: TaskRecord, max_tasks_per_user: int) -> TaskCreated:
        payload = task_to_json(record)
        owner = (record.tenant, record.user)

        def _create() -> TaskCreated:
            with transaction(self._db.connection) as connection:
                taken = connection.execute(
                    "SELECT 1 FROM tasks WHERE tenant = ? AND user = ? AND id = ?",
                    (*owner, record.task_id),
                ).fetchone()
                if taken is not None:
                    return "exists"
                (count,) = connection.execute(
                    "SELECT COUNT(*) FROM tasks WHERE tenant = ? AND user = ?", owner
                ).fetchone()
                if count >= max_tasks_per_user:
                    return "limit"
                connection.execute(
                    "INSERT INTO tasks (tenant, user, id, status, updated_at, revision, payload) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        *owner,
                        record.task_id,
                        record.status,
                        record.updated_at,
                        record.revision,
                        payload,
                    ),
                )
                return "created"

        return await self._db.run(_create)

    async def replace(self, record: TaskRecord, expected_revision: int) -> bool:
        payload = task_to_json(record)

        def _replace() -> bool:
            cursor = self._db.connection.execute(
                "UPDATE tasks SET status = ?, updated_at = ?, revision = ?, payload = ? "
                "WHERE tenant = ? AND user = ? AND id = ? AND revision = ?",
                (
                    record.status,
                    record.updated_at,
                    record.revision,
                    payload,
                    record.tenant,
                    record.user,
                    record.task_id,
                    expected_revision,
                ),
            )
            return cursor.rowcount > 0

        return await self._db.run(_replace)

    async def delete(self, tenant: str, user: str, task_id: str) -> bool:
        def _delete() -> bool:
            cursor = self._db.connection.execute(
                "DELETE FROM tasks WHERE tenant = ? AND user = ? AND id = ?",
                (tenant, user, task_id),
            )
            return cursor.rowcount > 0

        return await self._db.run(_delete)

    async def list(
        self, tenant: str, user: str, status: TaskStatus | None = None
    ) -> list[TaskRecord]:
        def _list() -> list[bytes]:
            query = "SELECT payload FROM tasks WHERE tenant = ? AND user = ?"
            args: tuple[str, ...] = (tenant, user)
            if status is not None:
                query += " AND status = ?"
                args = (*args, status)
            rows = self._db.connection.execute(query + " ORDER BY updated_at DESC", args)
            return [bytes(row[0]) for row in rows.fetchall()]

        return [task_from_json(tenant, user, raw) for raw in await self._db.run(_list)]
