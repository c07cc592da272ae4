"""A cap on the `x-gateway-namespace` values one tenant uses at a time.

Every namespace separates cache entries (and fingerprints, each with its own index
partition), so a client sending a fresh namespace per request would fill the caches
with entries nobody can hit. Past the cap a request naming a new namespace is answered
by the provider and neither looked up nor stored (`bypass`, reason `namespace_limit`);
namespaces idle for `idle_seconds` stop counting. Held per process, in memory: at most
`max_per_tenant` names per tenant.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable


class NamespaceLimiter:
    def __init__(
        self,
        max_per_tenant: int,
        idle_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max = max_per_tenant
        self._idle_seconds = idle_seconds
        self._clock = clock
        # tenant -> namespace -> last seen, least recently seen first
        self._seen: dict[str, OrderedDict[str, float]] = {}
        self.refused_total = 0

    def admit(self, tenant: str, namespace: str | None) -> bool:
        """Whether a request of `tenant` in `namespace` may use the caches."""
        if not namespace:
            return True  # the default namespace always may
        now = self._clock()
        seen = self._seen.setdefault(tenant, OrderedDict())
        if namespace in seen:
            seen[namespace] = now
            seen.move_to_end(namespace)
            return True
        while seen and now - next(iter(seen.values())) > self._idle_seconds:
            seen.popitem(last=False)
        if len(seen) >= self._max:
            self.refused_total += 1
            return False
        seen[namespace] = now
        return True

    def active(self, tenant: str) -> int:
        return len(self._seen.get(tenant, ()))
