"""The tool-result cache in the shared Redis: one string key per entry,
`<prefix>:toolcache:<tenant>:<key>`, written with `SET ... PX ttl` and expired by Redis
itself. The value is orjson of the entry's fields with the result embedded as the JSON
it was stored as.

Writes and hits go through the store's `RedisCapacity` (`capacity.tool_cache`): one Lua
script each, the write with its accounting and LRU evictions, the hit with its new LRU
score. A delete reads the tenant's LRU set (its entries only, not the keyspace), the
values in batches, and deletes the ones the filter matches.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import orjson
from redis.asyncio import Redis

from gateway.storage.redis.capacity import RedisCapacity, escape_key_part
from gateway.storage.redis.connection import RedisConnection, delete_keys
from gateway.telemetry.throttled_log import ThrottledLogger
from gateway.toolcache.records import ToolCacheEntry, ToolCacheFilter

logger = logging.getLogger(__name__)

# ARGV[10] payload, ARGV[11] TTL (ms).
_WRITE = """
redis.call('SET', KEYS[1], ARGV[10], 'PX', ARGV[11])
return account(KEYS[1])
"""
# Values read per MGET during a delete.
_READ_BATCH = 500


def _encode(entry: ToolCacheEntry) -> bytes:
    return orjson.dumps(
        {
            "key": entry.key,
            "tenant": entry.tenant,
            "namespace": entry.namespace,
            "tool": entry.tool,
            "method": entry.method,
            "target": entry.target,
            "stored_at": entry.stored_at,
            "expires_at": entry.expires_at,
            "result": orjson.Fragment(entry.result),
        }
    )


def _decode(raw: bytes | str) -> ToolCacheEntry:
    value: dict[str, Any] = orjson.loads(raw)
    return ToolCacheEntry(
        key=str(value["key"]),
        tenant=str(value["tenant"]),
        namespace=str(value["namespace"]),
        tool=str(value["tool"]),
        method=str(value["method"]),
        target=str(value["target"]),
        result=orjson.dumps(value["result"]),
        stored_at=float(value["stored_at"]),
        expires_at=float(value["expires_at"]),
    )


class RedisToolCache:
    """`ToolCacheStore` over the backend's connection (which it does not own)."""

    def __init__(
        self,
        connection: RedisConnection,
        prefix: str,
        capacity: RedisCapacity,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._connection = connection
        self._prefix = prefix
        self._capacity = capacity
        self._write = capacity.register(_WRITE)
        self._clock = clock
        self._corrupt = ThrottledLogger(logger, interval_seconds=60.0)

    def _key(self, tenant: str, key: str) -> str:
        return f"{self._prefix}:toolcache:{escape_key_part(tenant)}:{key}"

    def _readable(self, raw: Any) -> ToolCacheEntry | None:
        try:
            return _decode(raw)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            # Written by something else: a miss, and the next put overwrites it.
            self._corrupt.warning("unreadable tool-cache entry ignored (%s)", type(exc).__name__)
            return None

    async def get(self, tenant: str, key: str) -> ToolCacheEntry | None:
        raw = await self._capacity.get_and_touch(self._key(tenant, key))
        if raw is None:
            return None
        entry = self._readable(raw)
        if entry is None or entry.tenant != tenant or entry.expires_at <= self._clock():
            return None
        return entry

    async def put(self, entry: ToolCacheEntry) -> None:
        ttl_ms = int((entry.expires_at - self._clock()) * 1000)
        if ttl_ms <= 0:
            return
        redis_key = self._key(entry.tenant, entry.key)
        args = [*self._capacity.write_args(entry.tenant, entry.size_bytes), _encode(entry), ttl_ms]
        reply = await self._write([redis_key], args)
        self._capacity.settle(reply)

    async def delete(self, tool_filter: ToolCacheFilter) -> int:
        members = await self._capacity.tenant_members(tool_filter.tenant)
        removed = 0
        for start in range(0, len(members), _READ_BATCH):
            batch = members[start : start + _READ_BATCH]

            async def _read(client: Redis, batch: list[Any] = batch) -> list[Any]:
                return list(await client.mget(batch))

            values = await self._connection.run(_read)
            doomed = [
                member
                for member, raw in zip(batch, values, strict=True)
                if raw is not None
                and (entry := self._readable(raw)) is not None
                and tool_filter.matches(entry)
            ]
            if doomed:
                removed += await self._connection.run(delete_keys(doomed))
                await self._capacity.forget_gone(doomed)
        return removed

    async def sweep_expired(self) -> int:
        """Drop the bookkeeping of entries Redis expired or evicted itself."""
        return await self._capacity.sweep()

    async def close(self) -> None:
        """The connection is shared and closed by its owner (`RedisBackend.close`)."""
