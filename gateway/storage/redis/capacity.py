"""Entry and byte caps for one Redis-backed store, evicting the least recently used.

The same `capacity:` caps as the embedded stores, kept in Redis so that every replica
sharing it enforces one budget. Bookkeeping of store `<store>`, under
`<prefix>:capacity:<store>`:

- `:lru` and `:lru:<tenant>`: sorted sets of the entries' Redis keys, scored by last use
  (milliseconds; "used" = written, or served as a hit);
- `:usage` and `:usage:<tenant>`: hashes `{entries, bytes}`;
- `:meta`: a hash, entry key -> `"<bytes> <tenant>"`: what to subtract when it goes.

Every write runs in one Lua script: the write itself, its accounting and the evictions
it causes (the lowest-scored keys are deleted, and with them their search-index
entries), so concurrent replicas cannot overshoot a cap. Members whose key has already
gone (expired, or evicted by Redis's own `maxmemory`) are dropped from the sets when
eviction reaches them and by the periodic sweep.

The bookkeeping keys have no TTL on purpose: under the recommended `volatile-lru`
policy Redis evicts only keys with a TTL (every entry has one), never the books that
keep the caps. Scripts name the per-tenant keys themselves, so this needs a
non-cluster Redis (as RediSearch's FT.SEARCH over one index does anyway).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from gateway.cache.eviction import CapacityLedger, EvictionReason
from gateway.cache.limits import StoreLimits
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.lua_script import LuaScript
from gateway.storage.redis.pipelined import Encodable

# Members checked per sweep script call.
_SWEEP_BATCH = 500

# Shared by every script: ARGV[1] is the bookkeeping base key.
_BOOKS = """
local base = ARGV[1]
local lru = base .. ':lru'
local usage = base .. ':usage'
local meta = base .. ':meta'

local function owner_of(member)
  local owner = redis.call('HGET', meta, member)
  if not owner then return nil, 0 end
  local gap = string.find(owner, ' ', 1, true)
  return string.sub(owner, gap + 1), tonumber(string.sub(owner, 1, gap - 1))
end

-- Drop `member`'s accounting (not its key).
local function forget(member)
  redis.call('ZREM', lru, member)
  local who, bytes = owner_of(member)
  if not who then return end
  redis.call('HDEL', meta, member)
  redis.call('ZREM', lru .. ':' .. who, member)
  redis.call('HINCRBY', usage, 'entries', -1)
  redis.call('HINCRBY', usage, 'bytes', -bytes)
  local own = usage .. ':' .. who
  if redis.call('HINCRBY', own, 'entries', -1) <= 0 then
    redis.call('DEL', own)
  else
    redis.call('HINCRBY', own, 'bytes', -bytes)
  end
end

local function totals(hash)
  local values = redis.call('HMGET', hash, 'entries', 'bytes')
  return tonumber(values[1]) or 0, tonumber(values[2]) or 0
end
"""

# ARGV[2] tenant (escaped), [3] bytes, [4] now (ms), [5] max entries, [6] max bytes,
# [7] tenant max entries, [8] tenant max bytes, [9] '1' when a per-tenant cap is set;
# the store's own write follows, with its arguments from ARGV[10].
_ACCOUNT_AND_EVICT = """
local function evict(order, hash, max_entries, max_bytes)
  local evicted, gone = 0, 0
  while true do
    local entries, bytes = totals(hash)
    if entries <= max_entries and bytes <= max_bytes then break end
    local oldest = redis.call('ZRANGE', order, 0, 0)
    if #oldest == 0 then break end
    local member = oldest[1]
    if redis.call('DEL', member) == 1 then evicted = evicted + 1 else gone = gone + 1 end
    redis.call('ZREM', order, member)
    forget(member)
  end
  return evicted, gone
end

local function account(key)
  local tenant = ARGV[2]
  local size = tonumber(ARGV[3])
  local now = tonumber(ARGV[4])
  redis.call('HSET', meta, key, size .. ' ' .. tenant)
  redis.call('ZADD', lru, now, key)
  redis.call('ZADD', lru .. ':' .. tenant, now, key)
  redis.call('HINCRBY', usage, 'entries', 1)
  redis.call('HINCRBY', usage, 'bytes', size)
  redis.call('HINCRBY', usage .. ':' .. tenant, 'entries', 1)
  redis.call('HINCRBY', usage .. ':' .. tenant, 'bytes', size)
  local tenant_evicted, tenant_gone = 0, 0
  if ARGV[9] == '1' then
    tenant_evicted, tenant_gone = evict(
      lru .. ':' .. tenant, usage .. ':' .. tenant, tonumber(ARGV[7]), tonumber(ARGV[8]))
  end
  local evicted, gone = evict(lru, usage, tonumber(ARGV[5]), tonumber(ARGV[6]))
  local entries, bytes = totals(usage)
  return {tenant_evicted, evicted, tenant_gone + gone, entries, bytes}
end
"""

# KEYS[1] the entry; ARGV[2] now (ms); ARGV[3] '1': return the entry's value (a string
# key: the exact cache's hit path, one round trip for read and touch).
_TOUCH = (
    _BOOKS
    + """
local value = false
if ARGV[3] == '1' then
  value = redis.call('GET', KEYS[1])
  if not value then return false end
end
local who = owner_of(KEYS[1])
if who then
  redis.call('ZADD', lru, 'XX', ARGV[2], KEYS[1])
  redis.call('ZADD', lru .. ':' .. who, 'XX', ARGV[2], KEYS[1])
end
return value
"""
)

# ARGV[2..]: members to check; those whose key is gone lose their accounting.
_REAP = (
    _BOOKS
    + """
local reaped = 0
for i = 2, #ARGV do
  if redis.call('EXISTS', ARGV[i]) == 0 then
    forget(ARGV[i])
    reaped = reaped + 1
  end
end
local entries, bytes = totals(usage)
return {reaped, entries, bytes}
"""
)


def escape_key_part(part: str) -> str:
    # ":" separates parts; escaping it (and "%", the escape itself) keeps ("a:b", "c")
    # and ("a", "b:c") apart.
    return part.replace("%", "%25").replace(":", "%3A")


def write_script(write_lua: str) -> str:
    """A store's write script: `write_lua` does the write (KEYS[1] is the entry; its
    arguments start at ARGV[10]) and must end with `return account(KEYS[1])`."""
    return _BOOKS + _ACCOUNT_AND_EVICT + "forget(KEYS[1])\n" + write_lua


class RedisCapacity:
    """The caps of one store in Redis. Stores call `write_args` for their write script,
    `settle` with its reply, and `touch`/`get_and_touch` on hits."""

    def __init__(
        self,
        connection: RedisConnection,
        base_key: str,
        store: str,
        limits: StoreLimits,
        ledger: CapacityLedger | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._connection = connection
        self.base_key = base_key
        self._store = store
        self._limits = limits
        self._ledger = ledger
        self._clock = clock
        client = connection.client
        # A hit's read: on the pipelined socket.
        self._touch = LuaScript(connection, _TOUCH)
        self._reap: AsyncScript = client.register_script(_REAP)

    def register(self, write_lua: str) -> LuaScript:
        """A store's write script (`write_script`), run on the pipelined socket."""
        return LuaScript(self._connection, write_script(write_lua))

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def write_args(self, tenant: str, size_bytes: int) -> list[Any]:
        limits = self._limits
        per_tenant = (
            limits.max_entries_per_tenant is not None or limits.max_bytes_per_tenant is not None
        )
        return [
            self.base_key,
            escape_key_part(tenant),
            int(size_bytes),
            self._now_ms(),
            limits.max_entries,
            limits.max_bytes,
            limits.tenant_entries(),
            limits.tenant_bytes(),
            "1" if per_tenant else "0",
        ]

    def settle(self, reply: Sequence[Any]) -> None:
        """Count what a write script evicted and publish the store's totals."""
        tenant_evicted, evicted, gone, entries, size = (int(value) for value in reply)
        if self._ledger is None:
            return
        self._ledger.evicted(self._store, EvictionReason.TENANT_CAPACITY, tenant_evicted)
        self._ledger.evicted(self._store, EvictionReason.CAPACITY, evicted)
        self._ledger.evicted(self._store, EvictionReason.EXPIRED, gone)
        self._ledger.set_usage(self._store, max(entries, 0), max(size, 0))

    async def get_and_touch(self, key: str) -> Any:
        """GET `key` and, if it is there, mark it used: one round trip."""
        args: list[Encodable] = [self.base_key, self._now_ms(), "1"]
        return await self._touch([key], args)

    async def touch(self, key: str) -> None:
        args: list[Encodable] = [self.base_key, self._now_ms(), "0"]
        await self._touch([key], args)

    async def sweep(self) -> int:
        """Drop the members whose key is gone (expired, evicted by Redis, purged);
        returns how many. One ZSCAN page and one script per step."""
        order = f"{self.base_key}:lru"
        cursor = 0
        reaped = 0
        while True:

            async def _page(client: Redis, cursor: int = cursor) -> Any:
                return await client.zscan(order, cursor, count=_SWEEP_BATCH)

            cursor, page = await self._connection.run(_page)
            members = [member for member, _score in page]
            if members:

                async def _reap(client: Redis, members: list[Any] = members) -> Any:
                    return await self._reap(keys=[], args=[self.base_key, *members], client=client)

                count, entries, size = await self._connection.run(_reap)
                reaped += int(count)
                if self._ledger is not None:
                    self._ledger.evicted(self._store, EvictionReason.EXPIRED, int(count))
                    self._ledger.set_usage(self._store, max(int(entries), 0), max(int(size), 0))
            if int(cursor) == 0:
                break
        if not reaped:
            await self.refresh_usage()
        return reaped

    async def tenant_members(self, tenant: str) -> list[Any]:
        """The Redis keys of every entry the books hold for `tenant` (ZSCAN of its LRU
        set: the tenant's entries, not the whole keyspace)."""
        order = f"{self.base_key}:lru:{escape_key_part(tenant)}"

        async def _scan(client: Redis) -> list[Any]:
            return [member async for member, _score in client.zscan_iter(order, count=_SWEEP_BATCH)]

        members: list[Any] = await self._connection.run(_scan)
        return members

    async def forget_gone(self, members: Sequence[Any]) -> None:
        """Drop the accounting of `members` whose keys are gone (just deleted), so the
        totals are right before the next sweep."""
        for start in range(0, len(members), _SWEEP_BATCH):
            batch = list(members[start : start + _SWEEP_BATCH])

            async def _reap(client: Redis, batch: list[Any] = batch) -> Any:
                return await self._reap(keys=[], args=[self.base_key, *batch], client=client)

            _count, entries, size = await self._connection.run(_reap)
            if self._ledger is not None:
                self._ledger.set_usage(self._store, max(int(entries), 0), max(int(size), 0))

    async def refresh_usage(self) -> None:
        """The store's totals as Redis has them (every replica's writes)."""
        usage = f"{self.base_key}:usage"
        entries, size = await self._connection.run(
            lambda client: client.hmget(usage, ["entries", "bytes"])
        )
        if self._ledger is not None:
            self._ledger.set_usage(self._store, max(int(entries or 0), 0), max(int(size or 0), 0))
