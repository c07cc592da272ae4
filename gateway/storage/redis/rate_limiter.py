"""Rate limit buckets in the shared Redis: every replica charges the same buckets.

One Lua script per check (atomic, one round trip), timed by the server's own clock
(`TIME`, microseconds) so replicas whose clocks disagree still share one limit. The
algorithm is GCRA (`gateway/limits/gcra.py`): one key per bucket holding its TAT in
microseconds, expiring once the bucket is full again.
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.storage.rate_limiting import BucketState, RateBucket, RateVerdict
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.lua_script import LuaScript

# ARGV: per bucket (emission_us, tolerance_us, cost). All or nothing: nothing is written
# unless every bucket has room. Returns {allowed, retry_us, remaining1, reset1_us, ...}.
_ACQUIRE_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local n = #KEYS
local tats, new_tats = {}, {}
local retry = 0
for i = 1, n do
    local emission = tonumber(ARGV[3 * i - 2])
    local tolerance = tonumber(ARGV[3 * i - 1])
    local cost = tonumber(ARGV[3 * i])
    local tat = tonumber(redis.call('GET', KEYS[i]) or now)
    if tat < now then tat = now end
    tats[i] = tat
    new_tats[i] = tat + cost * emission
    local allow_at = new_tats[i] - tolerance
    if allow_at > now and allow_at - now > retry then retry = allow_at - now end
end
local out = {retry > 0 and 0 or 1, math.ceil(retry)}
for i = 1, n do
    local emission = tonumber(ARGV[3 * i - 2])
    local tolerance = tonumber(ARGV[3 * i - 1])
    local tat = tats[i]
    if retry == 0 then
        tat = new_tats[i]
        local ttl = math.ceil((tat - now) / 1000) + 1000
        redis.call('SET', KEYS[i], string.format('%.0f', tat), 'PX', ttl)
    end
    local room = now + tolerance - tat
    out[#out + 1] = math.max(0, math.floor(room / emission + 1e-9))
    out[#out + 1] = math.max(0, math.ceil(tat - now))
end
return out
"""

# ARGV: per bucket (emission_us, cost); a bucket never goes below empty.
_ADJUST_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
for i = 1, #KEYS do
    local emission = tonumber(ARGV[2 * i - 1])
    local cost = tonumber(ARGV[2 * i])
    local tat = tonumber(redis.call('GET', KEYS[i]) or now)
    if tat < now then tat = now end
    tat = tat + cost * emission
    if tat > now then
        local ttl = math.ceil((tat - now) / 1000) + 1000
        redis.call('SET', KEYS[i], string.format('%.0f', tat), 'PX', ttl)
    else
        redis.call('DEL', KEYS[i])
    end
end
return 1
"""

_MICROSECONDS = 1_000_000


class RedisRateLimiter:
    def __init__(self, connection: RedisConnection, prefix: str = "gateway") -> None:
        self._prefix = prefix
        # On the pipelined socket: a check is on every request's path.
        self._acquire = LuaScript(connection, _ACQUIRE_SCRIPT)
        self._adjust = LuaScript(connection, _ADJUST_SCRIPT)

    def _keys(self, buckets: Sequence[RateBucket]) -> list[str]:
        return [f"{self._prefix}:ratelimit:{bucket.key}" for bucket in buckets]

    async def acquire(self, buckets: Sequence[RateBucket]) -> RateVerdict:
        keys = self._keys(buckets)
        args: list[str] = []
        for bucket in buckets:
            args += [
                repr(bucket.emission_seconds * _MICROSECONDS),
                repr(bucket.tolerance_seconds * _MICROSECONDS),
                str(bucket.cost),
            ]
        reply = await self._acquire(keys, args)
        values = [int(value) for value in reply]
        states = tuple(
            BucketState(
                remaining=min(bucket.burst, values[2 + 2 * i]),
                reset_seconds=values[3 + 2 * i] / _MICROSECONDS,
            )
            for i, bucket in enumerate(buckets)
        )
        return RateVerdict(bool(values[0]), values[1] / _MICROSECONDS, states)

    async def adjust(self, buckets: Sequence[RateBucket]) -> None:
        keys = self._keys(buckets)
        args: list[str] = []
        for bucket in buckets:
            args += [repr(bucket.emission_seconds * _MICROSECONDS), str(bucket.cost)]
        await self._adjust(keys, args)
