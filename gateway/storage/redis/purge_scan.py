"""Purging by SCAN, shared by the Redis exact cache and vector index: an operator
action, O(entries), that reads the keys in batches and deletes the matching ones."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis

from gateway.storage.redis.connection import RedisConnection, delete_keys

# Keys per SCAN step, per read and per DEL: one bounded command each.
_BATCH_KEYS = 500


async def delete_scanned(
    connection: RedisConnection,
    pattern: str,
    read: Callable[[Redis, list[bytes]], Awaitable[list[Any]]],
    doomed: Callable[[bytes, Any], bool],
) -> int:
    """Delete the keys matching `pattern` whose value (as `read` returns one per key of
    a batch) is `doomed`; how many were deleted."""

    async def _scan(client: Redis) -> list[bytes]:
        return [key async for key in client.scan_iter(match=pattern, count=_BATCH_KEYS)]

    keys = await connection.run(_scan)
    removed = 0
    for start in range(0, len(keys), _BATCH_KEYS):
        batch = keys[start : start + _BATCH_KEYS]

        async def _read(client: Redis, batch: list[bytes] = batch) -> list[Any]:
            return await read(client, batch)

        values = await connection.run(_read)
        matching = [key for key, value in zip(batch, values, strict=True) if doomed(key, value)]
        if matching:
            removed += await connection.run(delete_keys(matching))
    return removed
