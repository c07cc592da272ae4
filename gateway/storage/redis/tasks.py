"""Task state in the shared Redis, for every replica.

Keys (under the backend's prefix, parts escaped by `RedisBackend.key`):
- `task:<tenant>:<user>:<id>`: a hash with the task's JSON document (`payload`) and its
  `revision`, for compare-and-set;
- `task-user:<tenant>:<user>`: the set of the user's task ids (listing, the cap).
No TTL: a task lives until it is deleted.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from gateway.storage.agent_protocols import TaskCreated
from gateway.storage.redis.backend import RedisBackend
from gateway.tasks.records import TaskRecord, TaskStatus, task_from_json, task_to_json

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 'limit' end
redis.call('HSET', KEYS[1], 'payload', ARGV[1], 'revision', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[4])
return 'created'
"""
_REPLACE = """
if redis.call('HGET', KEYS[1], 'revision') ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'payload', ARGV[1], 'revision', ARGV[2])
return 1
"""
_DELETE = """
redis.call('SREM', KEYS[2], ARGV[1])
return redis.call('DEL', KEYS[1])
"""


class RedisTaskStore:
    """`TaskStore` over the backend's connection (which it does not own)."""

    def __init__(self, backend: RedisBackend) -> None:
        self._backend = backend
        client = backend.connection.client
        self._create = client.register_script(_CREATE)
        self._replace = client.register_script(_REPLACE)
        self._delete = client.register_script(_DELETE)

    def _key(self, tenant: str, user: str, task_id: str) -> str:
        return self._backend.key("task", tenant, user, task_id)

    def _user_key(self, tenant: str, user: str) -> str:
        return self._backend.key("task-user", tenant, user)

    async def get(self, tenant: str, user: str, task_id: str) -> TaskRecord | None:
        key = self._key(tenant, user, task_id)

        async def _get(client: Redis) -> Any:
            return await client.hget(key, "payload")

        raw = await self._backend.connection.run(_get)
        return None if raw is None else task_from_json(tenant, user, raw)

    async def create(self, record: TaskRecord, max_tasks_per_user: int) -> TaskCreated:
        keys = [
            self._key(record.tenant, record.user, record.task_id),
            self._user_key(record.tenant, record.user),
        ]
        args: list[bytes | int | str] = [
            task_to_json(record),
            record.revision,
            max_tasks_per_user,
            record.task_id,
        ]
        script = self._create
        reply = await self._backend.connection.run(
            lambda client: script(keys=keys, args=args, client=client)
        )
        text = reply.decode() if isinstance(reply, bytes) else str(reply)
        if text == "exists":
            return "exists"
        return "limit" if text == "limit" else "created"

    async def replace(self, record: TaskRecord, expected_revision: int) -> bool:
        keys = [self._key(record.tenant, record.user, record.task_id)]
        args: list[bytes | int] = [task_to_json(record), record.revision, expected_revision]
        script = self._replace
        reply = await self._backend.connection.run(
            lambda client: script(keys=keys, args=args, client=client)
        )
        return bool(int(reply))

    async def delete(self, tenant: str, user: str, task_id: str) -> bool:
        keys = [self._key(tenant, user, task_id), self._user_key(tenant, user)]
        script = self._delete
        reply = await self._backend.connection.run(
            lambda client: script(keys=keys, args=[task_id], client=client)
        )
        return bool(int(reply))

    async def list(
        self, tenant: str, user: str, status: TaskStatus | None = None
    ) -> list[TaskRecord]:
        user_key = self._user_key(tenant, user)

        async def _read(client: Redis) -> list[Any]:
            ids = sorted(_text(raw) for raw in await client.smembers(user_key))
            if not ids:
                return []
            pipeline = client.pipeline(transaction=False)
            for task_id in ids:
                pipeline.hget(self._key(tenant, user, task_id), "payload")
            return list(await pipeline.execute())

        records = [
            task_from_json(tenant, user, raw)
            for raw in await self._backend.connection.run(_read)
            if raw is not None
        ]
        if status is not None:
            records = [record for record in records if record.status == status]
        return sorted(records, key=lambda record: -record.updated_at)

    async def close(self) -> None:
        return None  # the backend owns the connection


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)
