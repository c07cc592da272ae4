"""Both rate limiters behind one protocol; the Redis one on a real Redis, where two
connections (two replicas) share the buckets and the script's clock is the server's."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from gateway.storage.embedded.rate_limiter import InProcessRateLimiter
from gateway.storage.protocols import StoreUnavailable
from gateway.storage.rate_limiting import RateBucket, RateLimiter
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.rate_limiter import RedisRateLimiter
from gateway.testing.redis_server import RedisServer
from gateway.testing.threaded_server import free_port


@pytest.fixture(params=["embedded", "redis"])
async def limiter(
    request: pytest.FixtureRequest, prefix: str, connection: RedisConnection
) -> AsyncIterator[RateLimiter]:
    if request.param == "embedded":
        yield InProcessRateLimiter()
    else:
        yield RedisRateLimiter(connection, prefix)


async def test_burst_all_or_nothing_and_corrections(limiter: RateLimiter) -> None:
    requests = RateBucket("t:acme:rq", 3, 3, 1)
    tokens = RateBucket("t:acme:tk", 1000, 1000, 400)
    verdicts = [await limiter.acquire([requests, tokens]) for _ in range(3)]
    assert [v.allowed for v in verdicts] == [True, True, False]  # tokens ran out first
    assert verdicts[1].states[0].remaining == 1
    assert verdicts[1].states[1].remaining == 200
    refused = verdicts[2]
    # 200 tokens short at 1000 a minute: 12 s.
    assert refused.retry_after_seconds == pytest.approx(12.0, abs=0.5)
    assert refused.states[0].remaining == 1  # the request bucket was not charged
    await limiter.adjust([RateBucket("t:acme:tk", 1000, 1000, -383)])  # used 17, not 400
    assert (await limiter.acquire([requests, tokens])).allowed
    assert not (await limiter.acquire([requests])).allowed


async def test_two_connections_share_one_bucket(
    redis_server: RedisServer, prefix: str, connection: RedisConnection
) -> None:
    other = RedisConnection(redis_server.url)
    try:
        replicas = [RedisRateLimiter(connection, prefix), RedisRateLimiter(other, prefix)]
        bucket = RateBucket("t:acme:rq", 4, 4, 1)
        verdicts = [await replicas[n % 2].acquire([bucket]) for n in range(7)]
        assert [v.allowed for v in verdicts] == [True] * 4 + [False] * 3
    finally:
        await other.close()


async def test_an_unreachable_redis_raises_store_unavailable(prefix: str) -> None:
    dead = RedisConnection(f"redis://127.0.0.1:{free_port()}/0")
    try:
        with pytest.raises(StoreUnavailable):
            await RedisRateLimiter(dead, prefix).acquire([RateBucket("t:a:rq", 1, 1, 1)])
    finally:
        await dead.close()
