"""The adaptive counters in the shared Redis: one hash per scope
(`<prefix>:adaptive:<scope>`), written with HINCRBYFLOAT, and a set of the scopes
(`<prefix>:adaptive:scopes`); shared by every replica. See `storage.embedded.adaptive`
for what the counters are."""

from __future__ import annotations

from redis.asyncio import Redis

from gateway.storage.protocols import Counters
from gateway.storage.redis.backend import RedisBackend


class RedisAdaptiveStore:
    """Counters in Redis over the backend's connection (which it does not own)."""

    def __init__(self, backend: RedisBackend) -> None:
        self._backend = backend
        self._scopes_key = backend.key("adaptive", "scopes")

    def _scope_key(self, scope: str) -> str:
        return self._backend.key("adaptive", "scope", scope)

    async def add(self, deltas: Counters) -> None:
        work = {scope: fields for scope, fields in deltas.items() if any(fields.values())}
        if not work:
            return

        async def _add(client: Redis) -> None:
            # MULTI/EXEC: a replica never sees half of one sync's increments.
            async with client.pipeline(transaction=True) as pipe:
                for scope, fields in work.items():
                    pipe.sadd(self._scopes_key, scope)
                    key = self._scope_key(scope)
                    for name, value in fields.items():
                        if value:
                            pipe.hincrbyfloat(key, name, value)
                await pipe.execute()

        await self._backend.connection.run(_add)

    async def load(self) -> Counters:
        async def _load(client: Redis) -> Counters:
            scopes = sorted(
                s.decode() if isinstance(s, bytes) else str(s)
                for s in await client.smembers(self._scopes_key)
            )
            if not scopes:
                return {}
            async with client.pipeline(transaction=False) as pipe:
                for scope in scopes:
                    pipe.hgetall(self._scope_key(scope))
                hashes = await pipe.execute()
            counters: Counters = {}
            for scope, values in zip(scopes, hashes, strict=True):
                counters[scope] = {
                    (k.decode() if isinstance(k, bytes) else str(k)): float(v)
                    for k, v in values.items()
                }
            return counters

        return await self._backend.connection.run(_load)

    async def close(self) -> None:
        return None  # the backend owns the connection
