"""The audit trail in the shared Redis: one stream (`<prefix>:audit`) that every
replica appends to, trimmed by count and age on every append."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from gateway.audit_trail.records import AuditEntry, entry_from_json, entry_to_json
from gateway.storage.redis.backend import RedisBackend


class RedisAuditStore:
    """`AuditStore` over the backend's connection (which it does not own)."""

    def __init__(self, backend: RedisBackend) -> None:
        self._backend = backend
        self._stream = backend.key("audit")

    async def append(self, entry: AuditEntry, max_entries: int, min_at: float) -> None:
        fields: dict[Any, Any] = {"action": entry.action, "entry": entry_to_json(entry)}

        async def _append(client: Redis) -> None:
            pipeline = client.pipeline(transaction=True)
            pipeline.xadd(self._stream, fields, maxlen=max_entries, approximate=False)
            # Stream ids start with their time in milliseconds: drop the older ones.
            pipeline.xtrim(self._stream, minid=str(int(min_at * 1000)))
            await pipeline.execute()

        await self._backend.connection.run(_append)

    async def recent(self, limit: int, action: str | None) -> list[AuditEntry]:
        async def _read(client: Redis) -> list[Any]:
            # A filtered read scans the whole (capped) stream, newest first.
            count = limit if action is None else None
            return list(await client.xrevrange(self._stream, count=count) or [])

        entries: list[AuditEntry] = []
        for _, fields in await self._backend.connection.run(_read):
            entry = entry_from_json(fields.get(b"entry") or fields["entry"])
            if action is None or entry.action == action:
                entries.append(entry)
                if len(entries) >= limit:
                    break
        return entries

    async def close(self) -> None:
        return None  # the backend owns the connection
