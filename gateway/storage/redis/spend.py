"""Spend rows in the shared Redis, one hash per UTC day:

    <prefix>:spend:day:<day>      field JSON [tenant, key, model, column] -> number
    <prefix>:spend:tenant:<day>   field tenant, and JSON [tenant, key] -> spent_usd
                                  (what budgets read)

written with HINCRBYFLOAT in one MULTI/EXEC per batch, so replicas add up; each key
expires `MAX_RANGE_DAYS` days after its last write. Protocol:
`storage.protocols.SpendStore`."""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from redis.asyncio import Redis

from gateway.spend.periods import MAX_RANGE_DAYS
from gateway.spend.records import SPEND_COLUMNS, SpendRow
from gateway.storage.redis.backend import RedisBackend

_RETENTION_SECONDS = MAX_RANGE_DAYS * 86_400
_INTEGER_COLUMNS = frozenset({"requests", "hits", "estimated_requests"})


class RedisSpendStore:
    """Over the backend's connection (which it does not own)."""

    def __init__(self, backend: RedisBackend) -> None:
        self._backend = backend

    def _day_key(self, day: str) -> str:
        return self._backend.key("spend", "day", day)

    def _tenant_key(self, day: str) -> str:
        return self._backend.key("spend", "tenant", day)

    async def add(self, rows: Sequence[SpendRow]) -> None:
        if not rows:
            return

        async def _add(client: Redis) -> None:
            async with client.pipeline(transaction=True) as pipe:
                for row in rows:
                    day_key = self._day_key(row.day)
                    for column, value in zip(SPEND_COLUMNS, row.values(), strict=True):
                        if value:
                            field = orjson.dumps([row.tenant, row.key, row.model, column])
                            pipe.hincrbyfloat(day_key, field, value)
                    pipe.expire(day_key, _RETENTION_SECONDS)
                    if row.spent_usd:
                        tenant_key = self._tenant_key(row.day)
                        pipe.hincrbyfloat(tenant_key, row.tenant, row.spent_usd)
                        pipe.hincrbyfloat(
                            tenant_key, _key_field(row.tenant, row.key), row.spent_usd
                        )
                        pipe.expire(tenant_key, _RETENTION_SECONDS)
                await pipe.execute()

        await self._backend.connection.run(_add)

    async def tenant_spent(
        self, tenant: str, days: Sequence[str], key: str | None = None
    ) -> dict[str, float]:
        wanted = list(days)
        if not wanted:
            return {}
        field = tenant if key is None else _key_field(tenant, key)

        async def _read(client: Redis) -> list[object]:
            async with client.pipeline(transaction=False) as pipe:
                for day in wanted:
                    pipe.hget(self._tenant_key(day), field)
                return list(await pipe.execute())

        values = await self._backend.connection.run(_read)
        return {
            day: float(value) if value is not None else 0.0  # type: ignore[arg-type]
            for day, value in zip(wanted, values, strict=True)
        }

    async def rows(self, days: Sequence[str], tenant: str | None = None) -> list[SpendRow]:
        wanted = list(days)
        if not wanted:
            return []

        async def _read(client: Redis) -> list[dict[bytes, bytes]]:
            async with client.pipeline(transaction=False) as pipe:
                for day in wanted:
                    pipe.hgetall(self._day_key(day))
                return list(await pipe.execute())

        found: list[SpendRow] = []
        for day, fields in zip(wanted, await self._backend.connection.run(_read), strict=True):
            found.extend(_rows_of(day, fields, tenant))
        return found

    async def close(self) -> None:
        return None  # the backend owns the connection


def _key_field(tenant: str, key: str) -> bytes:
    """A key's field beside its tenant's (a tenant name never starts with '[')."""
    return orjson.dumps([tenant, key])


def _rows_of(day: str, fields: dict[bytes, bytes], tenant: str | None) -> list[SpendRow]:
    columns: dict[tuple[str, str, str], dict[str, float]] = {}
    for field, value in fields.items():
        row_tenant, key, model, column = orjson.loads(field)
        if tenant is not None and row_tenant != tenant:
            continue
        columns.setdefault((row_tenant, key, model), {})[column] = float(value)
    return [
        SpendRow(
            day,
            row_tenant,
            key,
            model,
            **{
                column: (round(value) if column in _INTEGER_COLUMNS else value)
                for column, value in values.items()
                if column in SPEND_COLUMNS
            },  # type: ignore[arg-type]
        )
        for (row_tenant, key, model), values in columns.items()
    ]
