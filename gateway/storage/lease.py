"""Short leases for single flight: one request computes, concurrent equal ones wait.

A lock is a lease with a TTL and a random token: it frees itself if its holder dies, and
only the holder (the token) can release it, so a holder that outlived its TTL cannot free
a lease someone else has taken since. Callers treat a store error like "not acquired
and nobody to wait for": forward the request; single flight is an optimisation.
Implementations: `storage.embedded.lock.InProcessLock`, `storage.redis.lock.RedisLock`.
"""

from __future__ import annotations


def lease_ttl_ms(ttl_seconds: float) -> int:
    if not ttl_seconds > 0:
        raise ValueError("ttl_seconds must be positive")
    return max(1, int(ttl_seconds * 1000))
