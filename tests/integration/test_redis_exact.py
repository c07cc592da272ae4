"""RedisExactCache against a real server."""

from __future__ import annotations

import asyncio

from gateway.storage.protocols import CachedCompletion
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.exact import RedisExactCache


def _entry(text: str = "héllo 你好") -> CachedCompletion:
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": {"total_tokens": 7},
    }
    return CachedCompletion(completion=completion, tenant="acme", model="m1", created_at=1.5)


async def test_put_get_round_trip(connection: RedisConnection, prefix: str) -> None:
    cache = RedisExactCache(connection, prefix=prefix)
    assert await cache.get("k" * 64) is None
    await cache.put("k" * 64, _entry(), ttl_seconds=60)
    assert await cache.get("k" * 64) == _entry()
    # Layout other tools rely on: one string key with a TTL.
    redis_key = f"{prefix}:exact:{'k' * 64}"
    assert cache.key_for("k" * 64) == redis_key
    assert 0 < await connection.client.pttl(redis_key) <= 60_000
    assert await cache.ping() is True


async def test_entries_expire(connection: RedisConnection, prefix: str) -> None:
    cache = RedisExactCache(connection, prefix=prefix)
    await cache.put("short", _entry(), ttl_seconds=1)
    await cache.put("long", _entry("other"), ttl_seconds=60)
    assert await cache.get("short") is not None
    await asyncio.sleep(1.1)
    assert await cache.get("short") is None
    assert await cache.get("long") == _entry("other")


async def test_zero_ttl_is_not_stored(connection: RedisConnection, prefix: str) -> None:
    cache = RedisExactCache(connection, prefix=prefix)
    await cache.put("none", _entry(), ttl_seconds=0)
    assert await cache.get("none") is None


async def test_unreadable_value_is_a_miss(connection: RedisConnection, prefix: str) -> None:
    cache = RedisExactCache(connection, prefix=prefix)
    await connection.client.set(cache.key_for("bad"), b"not json", px=60_000)
    assert await cache.get("bad") is None
