"""The memory store in Redis, shared by every replica (sessions: `sessions.py`).

Keys (under the backend's prefix, parts escaped by `RedisBackend.key`):
- `memory:<tenant>:<id>`: a hash; `record` (JSON), `vector` (float32 bytes) and the two
  access counters, kept as their own fields so that concurrent touches add up
  (HINCRBY) instead of overwriting each other;
- `memory-user:<tenant>:<user>`: the set of the user's ids (the retrieval scope);
- `memory-tenant:<tenant>`: a sorted set of the tenant's ids by creation time (listing);
- `memory-version:<tenant>:<user>`: a counter bumped by every add and delete, so that
  replicas know when their prepared copy of a user's memories is out of date;
- `memory-usage:<tenant>:<user>`: a hash of the user's totals (`count`, `bytes`) for the
  caps, kept in the same transaction as every add and delete;
- `memory-usage-tenant:<tenant>` and `memory-usage-all`: the same totals per tenant and
  for the whole store, for `capacity.memories` (counted once from the memories when
  missing: a store from before these caps);
- `memory-idempotency:<tenant>:<user>:<key>`: what a write with that `Idempotency-Key`
  answered (`fingerprint`, `answer`), expired by Redis;

Retrieval ranks one user's scope in the gateway (see `gateway/memory/retrieval.py`), so
the search is scoped before it starts; the scope is fetched in one pipelined round trip
when its version changed, and otherwise served from the replica's prepared copy.

Slightly over the ~400-line target: every write keeps the keys above consistent in one
transaction (WATCH/MULTI or a Lua script), and the scripts live next to their callers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import WatchError
from redis.typing import EncodableT, FieldT

from gateway.cache.limits import StoreLimits
from gateway.memory.records import MemoryRecord, MemoryScope
from gateway.storage.protocols import (
    AlreadyWritten,
    IdempotentWrite,
    MemoryPage,
    RecordedAnswer,
    RecordFilter,
    StoreUnavailable,
    UserQuota,
)
from gateway.storage.quota import check_quota, check_store_caps, one_owner, totals
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.redis.lua_script import LuaScript
from gateway.storage.redis.supersede import superseded_records
from gateway.storage.serialise import (
    vector_from_bytes,
    vector_to_bytes,
)

# Count an access only if the memory still exists (a deleted one must not come back as
# an empty hash).
_TOUCH = """
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HINCRBY', KEYS[i], 'access_count', 1)
    redis.call('HSET', KEYS[i], 'last_access_at', ARGV[1])
  end
end
return 0
"""


_WRITE_ATTEMPTS = 5
# Delete a memory, its index entries and its share of the user's totals, in one step
# (only if it still exists: a concurrent delete must not count twice).
_DELETE = """
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('INCR', KEYS[4])
for i = 5, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HINCRBY', KEYS[i], 'count', -1)
    redis.call('HINCRBY', KEYS[i], 'bytes', -tonumber(ARGV[2]))
  end
end
return 1
"""


class RedisMemoryStore:
    """With `caps` (`capacity.memories`), a write past the tenant's or the whole store's
    cap is refused, checked under the same WATCH as the user's caps."""

    def __init__(self, backend: RedisBackend, caps: StoreLimits | None = None) -> None:
        self._backend = backend
        self._connection = backend.connection
        self._caps = caps
        self._touch_script = LuaScript(backend.connection, _TOUCH)

    def _tenant_usage_key(self, tenant: str) -> str:
        return self._backend.key("memory-usage-tenant", tenant)

    def _all_usage_key(self) -> str:
        return self._backend.key("memory-usage-all")

    def _item_key(self, tenant: str, memory_id: str) -> str:
        return self._backend.key("memory", tenant, memory_id)

    def _user_key(self, tenant: str, user: str) -> str:
        return self._backend.key("memory-user", tenant, user)

    def _tenant_key(self, tenant: str) -> str:
        return self._backend.key("memory-tenant", tenant)

    def _version_key(self, tenant: str, user: str) -> str:
        return self._backend.key("memory-version", tenant, user)

    def _usage_key(self, tenant: str, user: str) -> str:
        return self._backend.key("memory-usage", tenant, user)

    def _idempotency_key(self, tenant: str, user: str, key: str) -> str:
        return self._backend.key("memory-idempotency", tenant, user, key)

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
        if quota is not None or idempotent is not None or supersedes:
            one_owner(records)
        by_owner: dict[tuple[str, str], list[MemoryRecord]] = {}
        for record in records:
            by_owner.setdefault((record.tenant, record.user), []).append(record)
        idempotency_key = (
            None
            if idempotent is None
            else self._idempotency_key(*next(iter(by_owner)), idempotent.key)
        )
        watched = [self._usage_key(*owner) for owner in by_owner]
        watched += [self._user_key(*owner) for owner in by_owner]
        tenants = sorted({tenant for tenant, _ in by_owner})
        if self._caps is not None:
            # Counted before the transaction when missing (once per store).
            await self._connection.run(lambda client: self._ensure_totals(client, tenants))
            watched += [self._tenant_usage_key(tenant) for tenant in tenants]
            watched.append(self._all_usage_key())
        if idempotency_key is not None:
            watched.append(idempotency_key)
        tenant0, user0 = next(iter(by_owner))
        watched += [self._item_key(tenant0, old_id) for old_id in supersedes or {}]

        async def _add(client: Redis) -> None:
            # Optimistic: read the key and the totals under WATCH, write in MULTI/EXEC;
            # a concurrent write to any of them aborts EXEC and the attempt starts over.
            # The key is written in the same transaction as the memories, so a write
            # that the server applied is found by its retry even if the answer was lost.
            for _ in range(_WRITE_ATTEMPTS):
                async with client.pipeline(transaction=True) as pipe:
                    try:
                        await pipe.watch(*watched)
                        if idempotent is not None and idempotency_key is not None:
                            fingerprint, answer = await pipe.hmget(
                                idempotency_key, ["fingerprint", "answer"]
                            )
                            if fingerprint is not None and answer is not None:
                                raise AlreadyWritten(
                                    RecordedAnswer(_text(fingerprint), _bytes(answer))
                                )
                        usages = {}
                        for owner, owned in by_owner.items():
                            usages[owner] = await self._usage(client, pipe, *owner)
                            check_quota(quota, usages[owner], totals(owned))
                        store_totals = await self._check_caps(pipe, tenants, records)
                        replaced = await superseded_records(
                            pipe,
                            lambda old_id: self._item_key(tenant0, old_id),
                            user0,
                            supersedes or {},
                        )
                        pipe.multi()  # type: ignore[no-untyped-call]
                        for item_key, value in replaced.items():
                            pipe.hset(item_key, "record", value)
                        for total_key, (total_count, total_bytes) in store_totals.items():
                            pipe.hset(
                                total_key, mapping={"count": total_count, "bytes": total_bytes}
                            )
                        self._queue_add(pipe, records)
                        for owner, owned in by_owner.items():
                            count, used = usages[owner]
                            pipe.hset(
                                self._usage_key(*owner),
                                mapping={
                                    "count": count + len(owned),
                                    "bytes": used + sum(r.size_bytes for r in owned),
                                },
                            )
                            pipe.incr(self._version_key(*owner))
                        if idempotent is not None and idempotency_key is not None:
                            pipe.hset(
                                idempotency_key,
                                mapping={
                                    "fingerprint": idempotent.fingerprint,
                                    "answer": idempotent.answer,
                                },
                            )
                            pipe.pexpire(idempotency_key, idempotent.ttl_seconds * 1000)
                        await pipe.execute()
                        return
                    except WatchError:
                        continue
            raise StoreUnavailable("memory write kept conflicting with concurrent writes")

        await self._connection.run(_add)

    async def _check_caps(
        self, pipe: Pipeline, tenants: Sequence[str], records: Sequence[MemoryRecord]
    ) -> dict[str, tuple[int, int]]:
        """Raise `QuotaExceeded` past a `capacity.memories` cap; otherwise the tenant
        and store totals after this write, by key."""
        if self._caps is None:
            return {}
        after: dict[str, tuple[int, int]] = {}
        all_key = self._all_usage_key()
        all_used = _pair(await pipe.hmget(all_key, ["count", "bytes"]))
        adding_all = totals(records)
        for tenant in tenants:
            key = self._tenant_usage_key(tenant)
            tenant_used = _pair(await pipe.hmget(key, ["count", "bytes"]))
            adding = totals([record for record in records if record.tenant == tenant])
            check_store_caps(self._caps, tenant_used, all_used, adding)
            after[key] = (tenant_used[0] + adding[0], tenant_used[1] + adding[1])
        check_store_caps(self._caps, (0, 0), all_used, adding_all)
        after[all_key] = (all_used[0] + adding_all[0], all_used[1] + adding_all[1])
        return after

    async def _ensure_totals(self, client: Redis, tenants: Sequence[str]) -> None:
        """Count the tenant and store totals from the memories where they are missing
        (a store written before these caps). Racing replicas count the same thing;
        HSETNX keeps whichever came first."""
        all_key = self._all_usage_key()
        missing = [t for t in tenants if not await client.exists(self._tenant_usage_key(t))]
        for tenant in missing:
            count, size = await self._count_tenant(client, tenant)
            await client.hsetnx(self._tenant_usage_key(tenant), "count", count)
            await client.hsetnx(self._tenant_usage_key(tenant), "bytes", size)
        if await client.exists(all_key):
            return
        count = size = 0
        prefix = self._backend.key("memory-tenant", "x")[: -len("x")]
        async for raw_key in client.scan_iter(match=f"{prefix}*", count=500):
            escaped = _text(raw_key)[len(prefix) :]
            tenant = escaped.replace("%3A", ":").replace("%25", "%")
            tenant_count, tenant_bytes = await self._count_tenant(client, tenant)
            count += tenant_count
            size += tenant_bytes
        await client.hsetnx(all_key, "count", count)
        await client.hsetnx(all_key, "bytes", size)

    async def _count_tenant(self, client: Redis, tenant: str) -> tuple[int, int]:
        raw_ids = await client.zrange(self._tenant_key(tenant), 0, -1)
        return await self._count_records(client, tenant, raw_ids)

    async def _count_records(
        self, client: Redis, tenant: str, raw_ids: Iterable[Any]
    ) -> tuple[int, int]:
        """How many of `raw_ids` (a tenant's memory ids) still have a record, and their
        bytes; ids whose record is gone count for nothing."""
        count = size = 0
        async with client.pipeline(transaction=False) as reader:
            for raw in raw_ids:
                reader.hget(self._item_key(tenant, _text(raw)), "record")
            for raw_record in await reader.execute():
                if raw_record is not None:
                    count += 1
                    size += MemoryRecord.from_storage(orjson.loads(raw_record)).size_bytes
        return count, size

    def _queue_add(self, pipe: Pipeline, records: Sequence[MemoryRecord]) -> None:
        for record in records:
            fields: dict[FieldT, EncodableT] = {
                "record": orjson.dumps(record.to_storage()),
                "access_count": record.access_count,
            }
            vector = vector_to_bytes(record.vector)
            if vector is not None:
                fields["vector"] = vector
            if record.last_access_at is not None:
                fields["last_access_at"] = repr(record.last_access_at)
            pipe.hset(self._item_key(record.tenant, record.id), mapping=fields)
            pipe.sadd(self._user_key(record.tenant, record.user), record.id)
            pipe.zadd(self._tenant_key(record.tenant), {record.id: record.created_at})

    async def _usage(
        self, client: Redis, reader: Redis | Pipeline, tenant: str, user: str
    ) -> tuple[int, int]:
        """The user's totals, read through `reader` (a pipeline in WATCH mode when
        writing); a user from before the caps (no totals yet) is counted from their
        memories."""
        count, used = await reader.hmget(self._usage_key(tenant, user), ["count", "bytes"])
        if count is not None and used is not None:
            return int(count), int(used)
        raw_ids = await reader.smembers(self._user_key(tenant, user))
        return await self._count_records(client, tenant, raw_ids)

    async def recorded_answer(self, tenant: str, user: str, key: str) -> RecordedAnswer | None:
        redis_key = self._idempotency_key(tenant, user, key)
        fingerprint, answer = await self._connection.run(
            lambda client: client.hmget(redis_key, ["fingerprint", "answer"])
        )
        if fingerprint is None or answer is None:
            return None
        return RecordedAnswer(_text(fingerprint), _bytes(answer))

    async def usage(self, tenant: str, user: str) -> tuple[int, int]:
        return await self._connection.run(lambda client: self._usage(client, client, tenant, user))

    async def _fetch(self, tenant: str, ids: Sequence[str]) -> list[MemoryRecord | None]:
        if not ids:
            return []

        async def _get(client: Redis) -> list[Any]:
            async with client.pipeline(transaction=False) as pipe:
                for memory_id in ids:
                    pipe.hmget(
                        self._item_key(tenant, memory_id),
                        ["record", "vector", "access_count", "last_access_at"],
                    )
                return list(await pipe.execute())

        rows = await self._connection.run(_get)
        return [_record(row) for row in rows]

    async def get(self, tenant: str, memory_id: str) -> MemoryRecord | None:
        (record,) = await self._fetch(tenant, [memory_id])
        return record

    async def delete(self, tenant: str, memory_id: str) -> bool:
        record = await self.get(tenant, memory_id)
        if record is None:
            return False
        keys = [
            self._item_key(tenant, memory_id),
            self._user_key(tenant, record.user),
            self._tenant_key(tenant),
            self._version_key(tenant, record.user),
            self._usage_key(tenant, record.user),
            self._tenant_usage_key(tenant),
            self._all_usage_key(),
        ]

        async def _delete(client: Redis) -> int:
            script = client.register_script(_DELETE)
            return int(await script(keys=keys, args=[memory_id, record.size_bytes]))

        return await self._connection.run(_delete) > 0

    async def existing(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return set()

        async def _existing(client: Redis) -> list[Any]:
            async with client.pipeline(transaction=False) as pipe:
                for memory_id in ids:
                    pipe.exists(self._item_key(tenant, memory_id))
                return list(await pipe.execute())

        flags = await self._connection.run(_existing)
        return {memory_id for memory_id, flag in zip(ids, flags, strict=True) if int(flag)}

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
        if user is not None:
            records = await self.in_scope(MemoryScope(tenant, user, namespace))
        else:
            key = self._tenant_key(tenant)
            raw_ids = await self._connection.run(lambda client: client.zrange(key, 0, -1))
            ids = [_text(raw) for raw in raw_ids]
            records = [record for record in await self._fetch(tenant, ids) if record is not None]
            if namespace is not None:
                records = [record for record in records if record.namespace == namespace]
        if tag is not None:
            records = [record for record in records if tag in record.tags]
        if matches is not None:
            records = [record for record in records if matches(record)]
        records.sort(key=lambda record: (-record.created_at, record.id))
        page = records[offset : offset + limit]
        return MemoryPage(page, has_more=len(records) > offset + limit)

    async def in_scope(self, scope: MemoryScope) -> list[MemoryRecord]:
        key = self._user_key(scope.tenant, scope.user)
        raw_ids = await self._connection.run(lambda client: client.smembers(key))
        ids = sorted(_text(raw) for raw in raw_ids)
        records = [
            record
            for record in await self._fetch(scope.tenant, ids)
            if record is not None and record.user == scope.user
        ]
        if scope.namespace is not None:
            records = [record for record in records if record.namespace == scope.namespace]
        return records

    async def owners(self) -> list[tuple[str, str]]:
        """From the users' id sets (a set is gone once its last id is removed)."""
        prefix = self._backend.key("memory-user", "x", "x")[: -len("x:x")]

        async def _owners(client: Redis) -> list[tuple[str, str]]:
            found: set[tuple[str, str]] = set()
            async for raw_key in client.scan_iter(match=f"{prefix}*", count=500):
                tenant, _, user = _text(raw_key)[len(prefix) :].partition(":")
                found.add((_unescape(tenant), _unescape(user)))
            return sorted(found)

        return await self._connection.run(_owners)

    async def scope_version(self, tenant: str, user: str) -> str:
        key = self._version_key(tenant, user)
        raw = await self._connection.call("GET", key)  # every turn with memory
        return "0" if raw is None else _text(raw)

    async def touch(self, tenant: str, memory_ids: Sequence[str], at: float) -> None:
        ids = list(memory_ids)
        if not ids:
            return

        # One script for all of them, on the pipelined socket (every turn that injects).
        await self._touch_script(
            [self._item_key(tenant, memory_id) for memory_id in ids], [repr(at)]
        )

    async def ping(self) -> bool:
        return await self._connection.ping()

    async def close(self) -> None:
        """The connection is shared and closed by its owner (`RedisBackend.close`)."""


def _record(row: list[Any]) -> MemoryRecord | None:
    raw_record, raw_vector, access_count, last_access_at = row
    if raw_record is None:
        return None
    value = orjson.loads(raw_record)
    value["access_count"] = int(access_count or 0)
    value["last_access_at"] = float(last_access_at) if last_access_at else None
    return MemoryRecord.from_storage(value, vector_from_bytes(raw_vector))


def _pair(values: Sequence[Any]) -> tuple[int, int]:
    count, size = values
    return int(count or 0), int(size or 0)


def _bytes(raw: Any) -> bytes:
    return raw if isinstance(raw, bytes) else str(raw).encode()


def _unescape(part: str) -> str:
    """A key part as `RedisBackend.key` escaped it, back."""
    return part.replace("%3A", ":").replace("%25", "%")


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)
