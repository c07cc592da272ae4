"""Short leases for single flight: one request computes, concurrent equal ones wait.

A lock is a lease with a TTL and a random token: it frees itself if its holder dies, and
only the holder (the token) can release it, so a holder that outlived its TTL cannot free
a lease someone else has taken since. Callers treat a store error like "not acquired
and nobody to wait for": forward the request; single flight is an optimisation.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Protocol

from gateway.cache.redis_connection import RedisConnection

# Delete the key only if it still holds our token: GET and DEL in one atomic step.
_RELEASE_SCRIPT = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""
# InProcessLock drops expired leases once it holds this many.
_SWEEP_AT = 1024


class Lock(Protocol):
    async def acquire(self, key: str, ttl_seconds: float) -> str | None:
        """A token when acquired; None when someone else holds `key`."""
        ...

    async def release(self, key: str, token: str) -> bool:
        """True when this token held `key` and it is now released."""
        ...


def _ttl_ms(ttl_seconds: float) -> int:
    if not ttl_seconds > 0:
        raise ValueError("ttl_seconds must be positive")
    return max(1, int(ttl_seconds * 1000))


class InProcessLock:
    """For the embedded backend (one process). Neither method awaits between reading
    and writing the table, so each runs atomically on the event loop: no lock needed."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._held: dict[str, tuple[str, float]] = {}  # key -> (token, expires at)

    async def acquire(self, key: str, ttl_seconds: float) -> str | None:
        ttl_ms = _ttl_ms(ttl_seconds)
        now = self._clock()
        held = self._held.get(key)
        if held is not None and held[1] > now:
            return None
        if len(self._held) >= _SWEEP_AT:
            self._held = {k: v for k, v in self._held.items() if v[1] > now}
        token = secrets.token_hex(16)
        self._held[key] = (token, now + ttl_ms / 1000)
        return token

    async def release(self, key: str, token: str) -> bool:
        held = self._held.get(key)
        if held is None or held[0] != token:
            return False
        del self._held[key]
        # Past its TTL the lease was already free (as a Redis key would have expired).
        return held[1] > self._clock()


class RedisLock:
    """Across replicas: `SET key token NX PX ttl`, released by compare-and-delete."""

    def __init__(self, connection: RedisConnection, prefix: str = "gateway") -> None:
        self._connection = connection
        self._prefix = prefix
        self._release = connection.client.register_script(_RELEASE_SCRIPT)

    def key_for(self, key: str) -> str:
        return f"{self._prefix}:lock:{key}"

    async def acquire(self, key: str, ttl_seconds: float) -> str | None:
        ttl_ms = _ttl_ms(ttl_seconds)
        token = secrets.token_hex(16)
        redis_key = self.key_for(key)
        acquired = await self._connection.run(
            lambda client: client.set(redis_key, token, nx=True, px=ttl_ms)
        )
        return token if acquired else None

    async def release(self, key: str, token: str) -> bool:
        redis_key = self.key_for(key)
        # EVALSHA, falling back to EVAL (redis-py does it) after a restart flushed scripts.
        deleted = await self._connection.run(
            lambda _: self._release(keys=[redis_key], args=[token])
        )
        return bool(deleted)
