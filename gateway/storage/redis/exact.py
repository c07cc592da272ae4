"""Exact cache in Redis: one string key per entry, expired by Redis itself.

Key: `<prefix>:exact:<key>`. The key handed in is already a hash over tenant, namespace,
model and request, so a lookup is one GET; tenant and model ride in the value for
inspection and for whoever serves the entry. Value: orjson of
`{completion, tenant, model, created_at}`, written with `SET ... PX ttl`.

With a `RedisCapacity` the write is one script (SET, accounting, LRU eviction past the
`capacity.exact_cache` caps) and a lookup is one script too (GET and, on a hit, the
entry's LRU score): still one round trip each.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from redis.asyncio import Redis

from gateway.cache.purge import PurgeFilter
from gateway.storage.protocols import CachedCompletion
from gateway.storage.redis.capacity import RedisCapacity
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.purge_scan import delete_scanned
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

# ARGV[10] payload, ARGV[11] TTL (ms).
_WRITE = """
redis.call('SET', KEYS[1], ARGV[10], 'PX', ARGV[11])
return account(KEYS[1])
"""


class RedisExactCache:
    """`ExactCache` over a shared `RedisConnection` (which it does not own)."""

    def __init__(
        self,
        connection: RedisConnection,
        prefix: str = "gateway",
        capacity: RedisCapacity | None = None,
    ) -> None:
        self._connection = connection
        self._prefix = prefix
        self._corrupt = ThrottledLogger(logger, interval_seconds=60.0)
        self._capacity = capacity
        self._write = None if capacity is None else capacity.register(_WRITE)

    def key_for(self, key: str) -> str:
        return f"{self._prefix}:exact:{key}"

    async def get(self, key: str) -> CachedCompletion | None:
        redis_key = self.key_for(key)
        if self._capacity is not None:
            raw = await self._capacity.get_and_touch(redis_key)
        else:
            raw = await self._connection.call("GET", redis_key)
        if raw is None:
            return None
        try:
            value: dict[str, Any] = orjson.loads(raw)
            return CachedCompletion(
                completion=value["completion"],
                tenant=str(value["tenant"]),
                model=str(value["model"]),
                created_at=float(value["created_at"]),
                namespace=dict(value.get("namespace") or {}),
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            # Written by something else (or an older layout): a miss, and the next
            # store overwrites it.
            self._corrupt.warning("unreadable exact-cache entry ignored (%s)", type(exc).__name__)
            return None

    async def put(self, key: str, entry: CachedCompletion, ttl_seconds: int) -> None:
        if ttl_seconds <= 0:
            return
        redis_key = self.key_for(key)
        payload = orjson.dumps(
            {
                "completion": entry.completion,
                "tenant": entry.tenant,
                "model": entry.model,
                "created_at": entry.created_at,
                "namespace": entry.namespace,
            }
        )
        ttl_ms = int(ttl_seconds * 1000)
        if self._capacity is None or self._write is None:
            await self._connection.call("SET", redis_key, payload, "PX", ttl_ms)
            return
        # Counted as the embedded store counts: the stored value and its key.
        size_bytes = len(payload) + len(key) + len(orjson.dumps(entry.namespace))
        args = [*self._capacity.write_args(entry.tenant, size_bytes), payload, ttl_ms]
        reply = await self._write([redis_key], args)
        self._capacity.settle(reply)

    async def sweep_expired(self) -> int:
        """Drop the bookkeeping of entries Redis expired or evicted itself."""
        return 0 if self._capacity is None else await self._capacity.sweep()

    async def purge(self, purge_filter: PurgeFilter) -> int:
        """SCANs this prefix's exact entries (an operator action, O(entries)); keys are
        hashes, so tenant, model and namespace are read from each value."""
        key_prefix = f"{self._prefix}:exact:"

        async def read(client: Redis, batch: list[bytes]) -> list[Any]:
            return list(await client.mget(batch))

        def doomed(redis_key: bytes, raw: Any) -> bool:
            if raw is None:
                return False
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                return False
            name = redis_key.decode() if isinstance(redis_key, bytes) else str(redis_key)
            key = name.removeprefix(key_prefix)
            namespace = value.get("namespace") or {}
            return purge_filter.matches(
                str(value.get("tenant")), str(value.get("model")), namespace, key
            )

        return await delete_scanned(self._connection, f"{key_prefix}*", read, doomed)

    async def ping(self) -> bool:
        return await self._connection.ping()

    async def close(self) -> None:
        """The connection is shared and closed by its owner (`RedisBackend.close`)."""
