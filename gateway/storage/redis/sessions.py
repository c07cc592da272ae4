"""The session store (the per-session knowledge cache) in Redis, shared by every replica.

Keys (under the backend's prefix, parts escaped by `RedisBackend.key`):
- `session:<tenant>:<user>:<session>`: the session's knowledge items (JSON), expired
  by Redis with the session TTL;
- `session-user:<tenant>:<user>`: a sorted set of the user's session ids by expiry
  time (ms), so that deleting a memory can remove its copies from every session.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from gateway.storage.protocols import SessionItem
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.redis.capacity import RedisCapacity
from gateway.storage.redis.lua_script import LuaScript
from gateway.storage.serialise import session_items_from_json, session_items_to_json

_FORGET_ATTEMPTS = 3


def _save_session_lua(first: int, result: str) -> str:
    """Write a session and index it under its user, in one step: the index lives as long
    as the user's longest-lived session, and expired sessions leave it on each write.
    Its arguments (items, TTL in ms, session id, now in ms) start at ARGV[`first`]."""
    items, ttl, session, now = (f"ARGV[{first + offset}]" for offset in range(4))
    return f"""
redis.call('SET', KEYS[1], {items}, 'PX', {ttl})
local now = tonumber({now})
local ttl = tonumber({ttl})
redis.call('ZADD', KEYS[2], now + ttl, {session})
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('PTTL', KEYS[2]) < ttl then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {result}
"""


_SAVE_SESSION = _save_session_lua(1, "0")
# The same, with the session's accounting and LRU eviction past `capacity.sessions`
# (see gateway/storage/redis/capacity.py): the capacity arguments come first, ARGV[1..9].
_SAVE_CAPPED_SESSION = _save_session_lua(10, "account(KEYS[1])")
# Replace a session's items only if nobody wrote it since it was read; keep its TTL.
_REPLACE_SESSION = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0
"""


class RedisSessionStore:
    """Sessions past `capacity` are evicted least recently written first, as in the
    embedded store (a load does not count as a use)."""

    def __init__(self, backend: RedisBackend, capacity: RedisCapacity | None = None) -> None:
        self._backend = backend
        self._connection = backend.connection
        self._capacity = capacity
        self._save_capped = None if capacity is None else capacity.register(_SAVE_CAPPED_SESSION)
        self._save = LuaScript(backend.connection, _SAVE_SESSION)  # every turn with a session

    def _key(self, tenant: str, user: str, session: str) -> str:
        return self._backend.key("session", tenant, user, session)

    def _user_key(self, tenant: str, user: str) -> str:
        return self._backend.key("session-user", tenant, user)

    async def load(self, tenant: str, user: str, session: str) -> list[SessionItem]:
        key = self._key(tenant, user, session)
        raw = await self._connection.call("GET", key)  # every turn with a session
        return [] if raw is None else session_items_from_json(raw)

    async def save(
        self, tenant: str, user: str, session: str, items: Sequence[SessionItem], ttl_seconds: int
    ) -> None:
        keys = [self._key(tenant, user, session), self._user_key(tenant, user)]
        payload = session_items_to_json(items)
        ttl_ms = int(ttl_seconds * 1000)
        now_ms = int(time.time() * 1000)
        if self._capacity is not None and self._save_capped is not None:
            # Counted as the embedded store counts: the items and the row's names.
            size_bytes = len(payload) + len(user.encode()) + len(session.encode())
            args = [*self._capacity.write_args(tenant, size_bytes), payload, ttl_ms, session]
            args.append(now_ms)
            reply = await self._save_capped(keys, args)
            self._capacity.settle(reply)
            return

        await self._save(keys, [payload, ttl_ms, session, now_ms])

    async def sweep_expired(self) -> int:
        """Drop the bookkeeping of sessions Redis expired or evicted itself."""
        return 0 if self._capacity is None else await self._capacity.sweep()

    async def forget(self, tenant: str, user: str, memory_ids: Sequence[str]) -> None:
        ids = set(memory_ids)
        if not ids:
            return
        index_key = self._user_key(tenant, user)
        now_ms = int(time.time() * 1000)
        raw_sessions = await self._connection.run(
            lambda client: client.zrangebyscore(index_key, now_ms, "+inf")
        )
        for raw_session in raw_sessions:
            await self._forget_in(self._key(tenant, user, _text(raw_session)), ids)

    async def _forget_in(self, key: str, ids: set[str]) -> None:
        """Compare-and-set, retried a few times if a turn writes the session meanwhile;
        a copy that still slips through is dropped on the session's next read (the
        memory no longer exists then), see `MemoryService.session_turn`."""
        for _ in range(_FORGET_ATTEMPTS):
            raw = await self._connection.run(lambda client: client.get(key))
            if raw is None:
                return
            items = session_items_from_json(raw)
            kept = [item for item in items if item.memory_id not in ids]
            if len(kept) == len(items):
                return
            payload = session_items_to_json(kept)

            async def _replace(client: Redis, old: Any = raw, new: bytes = payload) -> int:
                script = client.register_script(_REPLACE_SESSION)
                return int(await script(keys=[key], args=[old, new]))

            if await self._connection.run(_replace):
                return

    async def close(self) -> None:
        """See `RedisMemoryStore.close`."""


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)
