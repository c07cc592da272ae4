"""Single-flight leases across replicas, in the shared Redis; see `storage.lease`."""

from __future__ import annotations

import secrets

from gateway.storage.lease import lease_ttl_ms
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.lua_script import LuaScript

# Delete the key only if it still holds our token: GET and DEL in one atomic step.
_RELEASE_SCRIPT = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""


class RedisLock:
    """Across replicas: `SET key token NX PX ttl`, released by compare-and-delete."""

    def __init__(self, connection: RedisConnection, prefix: str = "gateway") -> None:
        self._connection = connection
        self._prefix = prefix
        # Every miss takes and releases one: both on the pipelined socket.
        self._release = LuaScript(connection, _RELEASE_SCRIPT)

    def key_for(self, key: str) -> str:
        return f"{self._prefix}:lock:{key}"

    async def acquire(self, key: str, ttl_seconds: float) -> str | None:
        ttl_ms = lease_ttl_ms(ttl_seconds)
        token = secrets.token_hex(16)
        redis_key = self.key_for(key)
        acquired = await self._connection.call("SET", redis_key, token, "NX", "PX", ttl_ms)
        return token if acquired else None

    async def release(self, key: str, token: str) -> bool:
        redis_key = self.key_for(key)
        deleted = await self._release([redis_key], [token])
        return bool(deleted)
