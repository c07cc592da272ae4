"""Runtime keys as each process remembers them: digest -> key, or "unknown".

Authenticating a remembered key is one dict lookup. What a process remembers can go
stale when a key is revoked or rotated, on this replica or another: every
`check_interval_seconds` the first request to come asks the store for its version
counter (one small read), and a changed version forgets everything. So a revocation
takes effect on every replica within the interval plus one read; the process that made
the change forgets at once (`forget_all`). Unknown digests are remembered too (in their
own bounded map), so a flood of wrong keys does not reach the store once per request.

If the store cannot be read, what is remembered keeps serving and the next request
after the interval tries again: an outage is not an outage of every runtime key.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable

from gateway.keys.records import RuntimeKey
from gateway.keys.settings import RuntimeKeySettings
from gateway.storage.admin_protocols import KeyStore
from gateway.storage.protocols import StoreUnavailable

logger = logging.getLogger(__name__)


class RuntimeKeyCache:
    def __init__(
        self,
        store: KeyStore,
        settings: RuntimeKeySettings,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._interval_seconds = settings.check_interval_seconds
        self._max_known = settings.cache_entries
        self._max_unknown = settings.unknown_cache_entries
        self._clock = clock
        self._known: OrderedDict[str, RuntimeKey] = OrderedDict()
        self._unknown: OrderedDict[str, None] = OrderedDict()
        self._version: int | None = None
        self._checked_at = -float("inf")
        # Bumped whenever everything is forgotten: a store read that started before
        # must not put back what it read.
        self._generation = 0
        self.version_check_failures = 0

    async def lookup(self, digest_hex: str) -> RuntimeKey | None:
        """The key with this secret digest, or None when there is none."""
        if self._clock() - self._checked_at >= self._interval_seconds:
            await self._check_version()
        known = self._known.get(digest_hex)
        if known is not None:
            return known
        if digest_hex in self._unknown:
            return None
        generation = self._generation
        key = await self._store.find(digest_hex)  # StoreUnavailable goes to the caller
        if generation == self._generation:
            self._remember(digest_hex, key)
        return key

    def forget_all(self) -> None:
        self._known.clear()
        self._unknown.clear()
        self._generation += 1

    @property
    def remembered(self) -> tuple[int, int]:
        """(known keys, unknown digests) held now."""
        return len(self._known), len(self._unknown)

    async def _check_version(self) -> None:
        # Marked first: requests arriving during the read use what is remembered
        # instead of piling up reads of their own.
        self._checked_at = self._clock()
        try:
            version = await self._store.version()
        except StoreUnavailable:
            self.version_check_failures += 1
            logger.warning("runtime keys: the key store's version could not be read")
            return
        if version != self._version:
            self.forget_all()
            self._version = version

    def _remember(self, digest_hex: str, key: RuntimeKey | None) -> None:
        if key is None:
            self._unknown[digest_hex] = None
            if len(self._unknown) > self._max_unknown:
                self._unknown.popitem(last=False)
            return
        self._known[digest_hex] = key
        if len(self._known) > self._max_known:
            self._known.popitem(last=False)
