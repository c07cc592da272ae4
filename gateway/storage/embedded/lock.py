"""Single-flight leases within one process (the embedded backend); see
`storage.lease` for what a lease is."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from gateway.storage.lease import lease_ttl_ms

# InProcessLock drops expired leases once it holds this many.
_SWEEP_AT = 1024


class InProcessLock:
    """For the embedded backend (one process). Neither method awaits between reading
    and writing the table, so each runs atomically on the event loop: no lock needed."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._held: dict[str, tuple[str, float]] = {}  # key -> (token, expires at)

    async def acquire(self, key: str, ttl_seconds: float) -> str | None:
        ttl_ms = lease_ttl_ms(ttl_seconds)
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
