"""Exact cache in Redis: one string key per entry, expired by Redis itself.

Key: `<prefix>:exact:<key>`. The key handed in is already a hash over tenant, namespace,
model and request, so a lookup is one GET; tenant and model ride in the value for
inspection and for whoever serves the entry. Value: orjson of
`{completion, tenant, model, created_at}`, written with `SET ... PX ttl`.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from gateway.cache.protocols import CachedCompletion
from gateway.cache.redis_connection import RedisConnection
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)


class RedisExactCache:
    """`ExactCache` over a shared `RedisConnection` (which it does not own)."""

    def __init__(self, connection: RedisConnection, prefix: str = "gateway") -> None:
        self._connection = connection
        self._prefix = prefix
        self._corrupt = ThrottledLogger(logger, interval_seconds=60.0)

    def key_for(self, key: str) -> str:
        return f"{self._prefix}:exact:{key}"

    async def get(self, key: str) -> CachedCompletion | None:
        redis_key = self.key_for(key)
        raw = await self._connection.run(lambda client: client.get(redis_key))
        if raw is None:
            return None
        try:
            value: dict[str, Any] = orjson.loads(raw)
            return CachedCompletion(
                completion=value["completion"],
                tenant=str(value["tenant"]),
                model=str(value["model"]),
                created_at=float(value["created_at"]),
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
            }
        )
        ttl_ms = int(ttl_seconds * 1000)
        await self._connection.run(lambda client: client.set(redis_key, payload, px=ttl_ms))

    async def ping(self) -> bool:
        return await self._connection.ping()

    async def close(self) -> None:
        """The connection is shared and closed by its owner (`RedisBackend.close`)."""
