"""Where the adaptive counters live: one small protocol, two implementations.

Counters are grouped by scope (a string naming tenant, and language or model) and are
all additive floats (`BucketStats` buckets, shadow and judge tallies, judge error
counts), so replicas merge by addition and a write is an increment, never a replace:

- embedded: one SQLite table in the data directory (`adaptive.sqlite3`), on the
  database's own thread like the other embedded stores; survives restarts;
- redis: one hash per scope (`<prefix>:adaptive:<scope>`), written with HINCRBYFLOAT,
  and a set of the scopes (`<prefix>:adaptive:scopes`); shared by every replica.

Nobody reads these on the request path: `AdaptiveStats` keeps an in-process view and
syncs it in the background.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from gateway.cache.embedded import SQLiteDatabase

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from gateway.cache.redis_backend import RedisBackend

# scope -> field -> value
Counters = dict[str, dict[str, float]]

ADAPTIVE_SCHEMA = """
CREATE TABLE IF NOT EXISTS adaptive_counters (
    scope TEXT NOT NULL,
    field TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (scope, field)
);
"""


class AdaptiveCounterStore(Protocol):
    async def add(self, deltas: Counters) -> None:
        """Add every delta to its counter (created at 0). All or nothing per call."""
        ...

    async def load(self) -> Counters:
        """Every counter of every scope."""
        ...

    async def close(self) -> None: ...


class SQLiteAdaptiveStore:
    def __init__(self, database: SQLiteDatabase) -> None:
        self._db = database
        self._closed = False

    @classmethod
    async def open(cls, data_dir: Path) -> SQLiteAdaptiveStore:
        database = SQLiteDatabase(data_dir / "adaptive.sqlite3")
        await database.open(ADAPTIVE_SCHEMA)
        return cls(database)

    async def add(self, deltas: Counters) -> None:
        rows = [
            (scope, name, value)
            for scope, fields in deltas.items()
            for name, value in fields.items()
            if value
        ]
        if not rows:
            return

        def _add() -> None:
            connection = self._db.connection
            connection.execute("BEGIN")
            try:
                connection.executemany(
                    "INSERT INTO adaptive_counters (scope, field, value) VALUES (?, ?, ?) "
                    "ON CONFLICT (scope, field) DO UPDATE SET value = value + excluded.value",
                    rows,
                )
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

        await self._db.run(_add)

    async def load(self) -> Counters:
        def _load() -> Counters:
            counters: Counters = {}
            for scope, name, value in self._db.connection.execute(
                "SELECT scope, field, value FROM adaptive_counters"
            ):
                counters.setdefault(scope, {})[name] = float(value)
            return counters

        return await self._db.run(_load)

    async def close(self) -> None:
        if not self._closed:  # closing twice is harmless
            self._closed = True
            await self._db.close()


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
