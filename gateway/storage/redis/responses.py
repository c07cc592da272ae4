"""Stored Responses API responses in the shared Redis: one string key per response,
`<prefix>:response:<tenant>:<id>`, written with `SET ... PX ttl` and expired by Redis
itself; the value is the same orjson document as the embedded store's. The tenant is
part of the key, so another tenant's id is simply not found."""

from __future__ import annotations

from redis.asyncio import Redis

from gateway.storage.protocols import StoredResponse
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.serialise import decode_stored_response, encode_stored_response


class RedisResponseStore:
    """`ResponseStore` over the backend's connection (which it does not own)."""

    def __init__(self, backend: RedisBackend) -> None:
        self._backend = backend

    def _key(self, tenant: str, response_id: str) -> str:
        return self._backend.key("response", tenant, response_id)

    async def put(
        self, tenant: str, response_id: str, stored: StoredResponse, ttl_seconds: int
    ) -> None:
        key, payload, ttl_ms = (
            self._key(tenant, response_id),
            encode_stored_response(stored),
            ttl_seconds * 1000,
        )

        async def _put(client: Redis) -> None:
            await client.set(key, payload, px=ttl_ms)

        await self._backend.connection.run(_put)

    async def get(self, tenant: str, response_id: str) -> StoredResponse | None:
        key = self._key(tenant, response_id)

        async def _get(client: Redis) -> bytes | str | None:
            raw: bytes | str | None = await client.get(key)
            return raw

        raw = await self._backend.connection.run(_get)
        return None if raw is None else decode_stored_response(raw)

    async def delete(self, tenant: str, response_id: str) -> bool:
        key = self._key(tenant, response_id)

        async def _delete(client: Redis) -> int:
            deleted: int = await client.delete(key)
            return deleted

        return bool(await self._backend.connection.run(_delete))

    async def close(self) -> None:
        return None  # the backend owns the connection
