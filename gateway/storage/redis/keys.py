"""Runtime API keys in the shared Redis, for every replica.

Keys (under the backend's prefix):
- `apikey:<id>`: a hash with the key's JSON (`payload`) and, once it is stopped, its
  `revoked_at` (kept apart so that a revocation never rewrites the JSON);
- `apikey-digest:<sha256 hex>`: the id of the key with that secret;
- `apikeys` and `apikeys-tenant:<tenant>`: ids by creation time, for listing;
- `apikeys-version`: a counter every write bumps in the same script; each replica
  polls it to forget the keys it remembered.
No TTL: keys live until they are deleted from Redis by hand.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from redis.asyncio import Redis

from gateway.keys.records import RuntimeKey, key_from_json, key_to_json
from gateway.storage.redis.backend import RedisBackend

# Shared by the scripts: stop KEYS[1] at ARGV[1] unless it already stops earlier.
_STOP = """
local function stop(key, at)
  local current = redis.call('HGET', key, 'revoked_at')
  if (not current) or tonumber(current) > tonumber(at) then
    redis.call('HSET', key, 'revoked_at', at)
  end
end
"""
# KEYS: record, digest, all ids, tenant ids, version. ARGV: json, id, created_at.
_ADD_BODY = """
local function add(k, a)
  redis.call('HSET', k[1], 'payload', a[1])
  redis.call('SET', k[2], a[2])
  redis.call('ZADD', k[3], a[3], a[2])
  redis.call('ZADD', k[4], a[3], a[2])
end
"""
_ADD = (
    _ADD_BODY
    + """
add(KEYS, ARGV)
return redis.call('INCR', KEYS[5])
"""
)
# KEYS: record, version. ARGV: at.
_REVOKE = (
    _STOP
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
stop(KEYS[1], ARGV[1])
redis.call('INCR', KEYS[2])
return 1
"""
)
# KEYS: old record, new record, new digest, all ids, tenant ids, version.
# ARGV: new json, new id, new created_at, old stops at.
_ROTATE = (
    _STOP
    + _ADD_BODY
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
stop(KEYS[1], ARGV[4])
add({KEYS[2], KEYS[3], KEYS[4], KEYS[5]}, ARGV)
redis.call('INCR', KEYS[6])
return 1
"""
)


class RedisKeyStore:
    """`KeyStore` over the backend's connection (which it does not own)."""

    def __init__(self, backend: RedisBackend) -> None:
        self._backend = backend
        client = backend.connection.client
        self._add = client.register_script(_ADD)
        self._revoke = client.register_script(_REVOKE)
        self._rotate = client.register_script(_ROTATE)
        self._version_key = backend.key("apikeys-version")
        self._all_key = backend.key("apikeys")

    def _record(self, key_id: str) -> str:
        return self._backend.key("apikey", key_id)

    def _tenant_key(self, tenant: str) -> str:
        return self._backend.key("apikeys-tenant", tenant)

    def _add_keys(self, key: RuntimeKey) -> list[str]:
        return [
            self._record(key.key_id),
            self._backend.key("apikey-digest", key.digest_hex),
            self._all_key,
            self._tenant_key(key.tenant),
        ]

    async def _script(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        return await self._backend.connection.run(
            lambda client: script(keys=keys, args=args, client=client)
        )

    async def add(self, key: RuntimeKey) -> None:
        args = [key_to_json(key), key.key_id, repr(key.created_at)]
        await self._script(self._add, [*self._add_keys(key), self._version_key], args)

    async def get(self, key_id: str) -> RuntimeKey | None:
        record = self._record(key_id)

        async def _get(client: Redis) -> Any:
            return await client.hmget(record, ["payload", "revoked_at"])

        return _decoded(await self._backend.connection.run(_get))

    async def find(self, digest_hex: str) -> RuntimeKey | None:
        digest_key = self._backend.key("apikey-digest", digest_hex)

        async def _id(client: Redis) -> Any:
            return await client.get(digest_key)

        key_id = await self._backend.connection.run(_id)
        return None if key_id is None else await self.get(_text(key_id))

    async def list(self, tenant: str | None) -> list[RuntimeKey]:
        ids_key = self._all_key if tenant is None else self._tenant_key(tenant)

        async def _read(client: Redis) -> list[Any]:
            ids = [_text(raw) for raw in await client.zrange(ids_key, 0, -1)]
            if not ids:
                return []
            pipeline = client.pipeline(transaction=False)
            for key_id in ids:
                pipeline.hmget(self._record(key_id), ["payload", "revoked_at"])
            return list(await pipeline.execute())

        keys = [_decoded(reply) for reply in await self._backend.connection.run(_read)]
        return [key for key in keys if key is not None]

    async def revoke(self, key_id: str, at: float) -> RuntimeKey | None:
        keys = [self._record(key_id), self._version_key]
        if not int(await self._script(self._revoke, keys, [repr(at)])):
            return None
        return await self.get(key_id)

    async def rotate(self, key_id: str, new_key: RuntimeKey, old_stops_at: float) -> bool:
        keys = [self._record(key_id), *self._add_keys(new_key), self._version_key]
        args = [key_to_json(new_key), new_key.key_id, repr(new_key.created_at), repr(old_stops_at)]
        return bool(int(await self._script(self._rotate, keys, args)))

    async def version(self) -> int:
        async def _version(client: Redis) -> Any:
            return await client.get(self._version_key)

        raw = await self._backend.connection.run(_version)
        return 0 if raw is None else int(raw)

    async def close(self) -> None:
        return None  # the backend owns the connection


def _decoded(reply: list[Any]) -> RuntimeKey | None:
    payload, revoked_at = reply
    if payload is None:
        return None
    key = key_from_json(payload)
    return key if revoked_at is None else replace(key, revoked_at=float(_text(revoked_at)))


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)
