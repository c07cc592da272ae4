"""A Lua script run on the hot path's pipelined socket (`RedisConnection.call`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import redis.exceptions

from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.pipelined import Encodable


class LuaScript:
    """EVALSHA, then EVAL (which loads it) when the server does not know the script:
    its first use, or after a restart flushed the script cache."""

    def __init__(self, connection: RedisConnection, source: str) -> None:
        self._connection = connection
        self._source = source
        self._sha = hashlib.sha1(source.encode()).hexdigest()  # noqa: S324 (Redis's own id)

    async def __call__(self, keys: Sequence[Encodable], args: Sequence[Encodable]) -> Any:
        try:
            return await self._connection.call("EVALSHA", self._sha, len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:
            return await self._connection.call("EVAL", self._source, len(keys), *keys, *args)
