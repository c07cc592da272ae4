"""The knowledge store in Redis, shared by every replica.

Keys (under the backend's prefix, parts escaped by `RedisBackend.key`):
- `knowledge:<tenant>:<id>`: a hash; `record` (JSON) and `vector` (float32 bytes);
- `knowledge-tenant:<tenant>`: a sorted set of the tenant's ids by creation time
  (listing; its size is what the per-tenant cap counts);
- `knowledge-ns:<tenant>` and `knowledge-ns:<tenant>:<namespace>`: the ids without a
  namespace and those of each namespace (the retrieval scopes);
- `knowledge-doc:<tenant>:<document>`: a document's ids;
- `knowledge-version:<tenant>`: bumped in the same transaction as every add and
  delete, so a replica's prepared index of the tenant's knowledge is rebuilt on its
  next read after any change anywhere. After each write the tenant is published on
  `<prefix>:knowledge-versions`, which lets each replica answer version reads from
  memory between changes (`version_watch.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import orjson
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import WatchError
from redis.typing import EncodableT, FieldT

from gateway.knowledge.records import KnowledgeRecord, KnowledgeScope
from gateway.storage.agent_protocols import KnowledgePage
from gateway.storage.protocols import QuotaExceeded, StoreUnavailable
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.serialise import vector_from_bytes, vector_to_bytes
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

_WRITE_ATTEMPTS = 5


class RedisKnowledgeStore:
    """`KnowledgeStore` over the backend's connection (which it does not own)."""

    def __init__(self, backend: RedisBackend) -> None:
        self._backend = backend
        self._connection = backend.connection
        self._versions = backend.knowledge_versions
        self._announce_failures = ThrottledLogger(logger, interval_seconds=60.0)

    def _item_key(self, tenant: str, item_id: str) -> str:
        return self._backend.key("knowledge", tenant, item_id)

    def _tenant_key(self, tenant: str) -> str:
        return self._backend.key("knowledge-tenant", tenant)

    def _namespace_key(self, tenant: str, namespace: str) -> str:
        if not namespace:
            return self._backend.key("knowledge-ns", tenant)
        return self._backend.key("knowledge-ns", tenant, namespace)

    def _document_key(self, tenant: str, document_id: str) -> str:
        return self._backend.key("knowledge-doc", tenant, document_id)

    def _version_key(self, tenant: str) -> str:
        return self._backend.key("knowledge-version", tenant)

    async def add(
        self, records: Sequence[KnowledgeRecord], *, max_items: int, replaces: str | None = None
    ) -> None:
        if not records:
            return
        tenants = {record.tenant for record in records}
        if len(tenants) != 1:
            raise ValueError("one write holds the items of one tenant")
        tenant = tenants.pop()
        counted = self._tenant_key(tenant)
        watched = [counted]
        if replaces is not None:
            watched.append(self._document_key(tenant, replaces))

        async def _add(client: Redis) -> None:
            # Optimistic: count (and read the replaced document) under WATCH, write in
            # MULTI/EXEC; a concurrent write of the tenant aborts EXEC and the attempt
            # starts over.
            for _ in range(_WRITE_ATTEMPTS):
                async with client.pipeline(transaction=True) as pipe:
                    try:
                        await pipe.watch(*watched)
                        replaced = await self._replaced(pipe, tenant, replaces)
                        used = int(await pipe.zcard(counted)) - len(replaced)
                        if used + len(records) > max_items:
                            raise QuotaExceeded(
                                "count", used, len(records), max_items, scope="tenant"
                            )
                        pipe.multi()  # type: ignore[no-untyped-call]
                        self._queue_remove(pipe, tenant, replaced)
                        self._queue_add(pipe, records)
                        self._queue_bump(pipe, tenant)
                        await pipe.execute()
                        return
                    except WatchError:
                        continue
            raise StoreUnavailable("knowledge write kept conflicting with concurrent writes")

        try:
            await self._connection.run(_add)
        finally:
            await self._changed(tenant)  # also after a failure: it may have landed

    async def _replaced(
        self, pipe: Pipeline, tenant: str, document_id: str | None
    ) -> list[KnowledgeRecord]:
        """The items of `document_id` (read through a pipeline in WATCH mode)."""
        if document_id is None:
            return []
        raw_ids = await pipe.smembers(self._document_key(tenant, document_id))
        found: list[KnowledgeRecord] = []
        for raw in sorted(_text(value) for value in raw_ids):
            raw_record = await pipe.hget(self._item_key(tenant, raw), "record")
            if raw_record is not None:
                found.append(KnowledgeRecord.from_storage(orjson.loads(raw_record)))
        return found

    def _queue_bump(self, pipe: Pipeline, tenant: str) -> None:
        """The version moves in the write's transaction."""
        pipe.incr(self._version_key(tenant))

    async def _changed(self, tenant: str) -> None:
        """After a write (or a failed one, which may have landed): this process forgets
        the tenant's version, and every replica is told to (`version_watch.py`) before
        the caller answers. Not in the write's transaction: a user whose ACL forbids
        PUBLISH must still be able to write; the others then see the change within
        `redis_knowledge_version_memory_seconds`."""
        self._versions.forget(tenant)
        try:
            await self._connection.call("PUBLISH", self._versions.channel, tenant)
        except Exception as exc:  # StoreUnavailable, or an ACL refusal
            self._announce_failures.warning(
                "knowledge change not announced to other replicas (%s); they see it "
                "within the version memory bound",
                type(exc).__name__,
            )

    def _queue_remove(
        self, pipe: Pipeline, tenant: str, records: Sequence[KnowledgeRecord]
    ) -> None:
        """Four commands per record, the DEL first (see `_remove`)."""
        for record in records:
            pipe.delete(self._item_key(tenant, record.id))
            pipe.zrem(self._tenant_key(tenant), record.id)
            pipe.srem(self._namespace_key(tenant, record.namespace), record.id)
            pipe.srem(self._document_key(tenant, record.document_id), record.id)

    def _queue_add(self, pipe: Pipeline, records: Sequence[KnowledgeRecord]) -> None:
        for record in records:
            fields: dict[FieldT, EncodableT] = {"record": orjson.dumps(record.to_storage())}
            vector = vector_to_bytes(record.vector)
            if vector is not None:
                fields["vector"] = vector
            pipe.hset(self._item_key(record.tenant, record.id), mapping=fields)
            pipe.zadd(self._tenant_key(record.tenant), {record.id: record.created_at})
            pipe.sadd(self._namespace_key(record.tenant, record.namespace), record.id)
            pipe.sadd(self._document_key(record.tenant, record.document_id), record.id)

    async def _fetch(self, tenant: str, ids: Sequence[str]) -> list[KnowledgeRecord]:
        """The records of `ids` that still exist, in the order of `ids`."""
        if not ids:
            return []

        async def _get(client: Redis) -> list[Any]:
            async with client.pipeline(transaction=False) as pipe:
                for item_id in ids:
                    pipe.hmget(self._item_key(tenant, item_id), ["record", "vector"])
                return list(await pipe.execute())

        rows = await self._connection.run(_get)
        return [
            KnowledgeRecord.from_storage(orjson.loads(raw), vector_from_bytes(vector))
            for raw, vector in rows
            if raw is not None
        ]

    async def get(self, tenant: str, item_id: str) -> KnowledgeRecord | None:
        found = await self._fetch(tenant, [item_id])
        return found[0] if found else None

    async def _remove(self, tenant: str, records: Sequence[KnowledgeRecord]) -> list[str]:
        """Delete `records` and their index entries in one transaction; the ids that
        were still there."""

        async def _delete(client: Redis) -> list[Any]:
            async with client.pipeline(transaction=True) as pipe:
                self._queue_remove(pipe, tenant, records)
                self._queue_bump(pipe, tenant)
                return list(await pipe.execute())

        try:
            results = await self._connection.run(_delete)
        finally:
            await self._changed(tenant)
        # Four results per record, the DEL first.
        return [record.id for i, record in enumerate(records) if int(results[4 * i]) > 0]

    async def delete(self, tenant: str, item_id: str) -> bool:
        record = await self.get(tenant, item_id)
        if record is None:
            return False
        return bool(await self._remove(tenant, [record]))

    async def delete_document(self, tenant: str, document_id: str) -> list[str]:
        key = self._document_key(tenant, document_id)
        raw_ids = await self._connection.run(lambda client: client.smembers(key))
        records = await self._fetch(tenant, sorted(_text(raw) for raw in raw_ids))
        if not records:
            return []
        return await self._remove(tenant, records)

    async def list_page(
        self,
        tenant: str,
        namespace: str | None,
        document_id: str | None,
        limit: int,
        offset: int,
    ) -> KnowledgePage:
        raw_ids: list[Any]
        if document_id is not None:
            key = self._document_key(tenant, document_id)
            raw_ids = list(await self._connection.run(lambda client: client.smembers(key)))
        else:
            key = self._tenant_key(tenant)
            raw_ids = list(await self._connection.run(lambda client: client.zrange(key, 0, -1)))
        records = await self._fetch(tenant, [_text(raw) for raw in raw_ids])
        if namespace is not None:
            records = [record for record in records if record.namespace == namespace]
        records.sort(key=lambda r: (-r.created_at, r.document_id, r.chunk, r.id))
        page = records[offset : offset + limit]
        return KnowledgePage(page, has_more=len(records) > offset + limit)

    async def in_scope(self, scope: KnowledgeScope) -> list[KnowledgeRecord]:
        keys = [self._namespace_key(scope.tenant, "")]
        if scope.namespace:
            keys.append(self._namespace_key(scope.tenant, scope.namespace))
        raw_ids = await self._connection.run(lambda client: client.sunion(keys))
        records = await self._fetch(scope.tenant, sorted(_text(raw) for raw in raw_ids))
        return [record for record in records if record.visible_in(scope)]

    async def version(self, tenant: str) -> str:
        # Every request of a tenant with knowledge asks: from memory between changes.
        remembered = self._versions.recall(tenant)
        if remembered is not None:
            return remembered
        generation = self._versions.generation
        raw = await self._connection.call("GET", self._version_key(tenant))
        version = "0" if raw is None else _text(raw)
        self._versions.remember(tenant, version, generation)
        return version

    async def count(self, tenant: str) -> int:
        key = self._tenant_key(tenant)
        return int(await self._connection.run(lambda client: client.zcard(key)))

    async def close(self) -> None:
        """The connection is shared and closed by its owner (`RedisBackend.close`)."""


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)
