"""Single-flight leases: the in-process one and the Redis one obey the same contract."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from gateway.storage.embedded.lock import InProcessLock
from gateway.storage.protocols import Lock
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.lock import RedisLock


@pytest.fixture(params=["in_process", "redis"])
async def lock(
    request: pytest.FixtureRequest, connection: RedisConnection, prefix: str
) -> AsyncIterator[Lock]:
    if request.param == "in_process":
        yield InProcessLock()
    else:
        yield RedisLock(connection, prefix=prefix)


async def test_one_holder_at_a_time(lock: Lock) -> None:
    token = await lock.acquire("job", ttl_seconds=5)
    assert token is not None
    assert await lock.acquire("job", ttl_seconds=5) is None
    assert await lock.acquire("other-job", ttl_seconds=5) is not None
    assert await lock.release("job", "not-the-token") is False
    assert await lock.acquire("job", ttl_seconds=5) is None  # still held
    assert await lock.release("job", token) is True
    assert await lock.release("job", token) is False  # only once
    again = await lock.acquire("job", ttl_seconds=5)
    assert again is not None and again != token


async def test_lease_expires(lock: Lock) -> None:
    stale = await lock.acquire("job", ttl_seconds=0.2)
    assert stale is not None
    await asyncio.sleep(0.3)
    fresh = await lock.acquire("job", ttl_seconds=5)
    assert fresh is not None
    # The first holder outlived its lease: it must not free the new holder's.
    assert await lock.release("job", stale) is False
    assert await lock.acquire("job", ttl_seconds=5) is None
    assert await lock.release("job", fresh) is True


async def test_concurrent_acquirers_get_one_token(lock: Lock) -> None:
    tokens = await asyncio.gather(*(lock.acquire("race", ttl_seconds=5) for _ in range(20)))
    assert sum(token is not None for token in tokens) == 1


async def test_ttl_must_be_positive(lock: Lock) -> None:
    with pytest.raises(ValueError):
        await lock.acquire("job", ttl_seconds=0)


def test_in_process_lock_with_a_fake_clock() -> None:
    now = [100.0]
    lock = InProcessLock(clock=lambda: now[0])

    async def scenario() -> None:
        token = await lock.acquire("k", 10)
        assert token is not None
        now[0] += 9.9
        assert await lock.acquire("k", 10) is None
        now[0] += 0.2
        assert await lock.release("k", token) is False  # expired: already free
        assert await lock.acquire("k", 10) is not None

    asyncio.run(scenario())


async def test_redis_lock_keys_are_namespaced(connection: RedisConnection, prefix: str) -> None:
    lock = RedisLock(connection, prefix=prefix)
    token = await lock.acquire("fp:1", ttl_seconds=5)
    assert token is not None
    assert await connection.client.get(f"{prefix}:lock:fp:1") == token.encode()
    assert 0 < await connection.client.pttl(f"{prefix}:lock:fp:1") <= 5000
