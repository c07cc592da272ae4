"""A real Redis 8 with RediSearch for the whole session (started from PyPI packages),
and per-test connections whose keys and indexes live under a prefix of their own."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from gateway.storage.redis.connection import RedisConnection
from gateway.testing.redis_server import RedisServer


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture
def prefix() -> str:
    # Tests share the server: a prefix each keeps their keys and indexes apart.
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def connection(redis_server: RedisServer) -> AsyncIterator[RedisConnection]:
    conn = RedisConnection(redis_server.url)
    yield conn
    await conn.close()
