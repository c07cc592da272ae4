"""Everything the gateway keeps in Redis, over one connection.

`RedisBackend.open()` builds the process's `RedisConnection` and the stores on it: the
exact cache, the semantic index for the configured embedder, the single-flight lock, a
factory for further vector indexes, and `key()` for stores added later (memory,
sessions) to namespace their keys under the same prefix. Several gateways (or several
deployments, with different prefixes) can share one Redis.

Opening never fails because Redis is down: the stores fail open (`StoreUnavailable`,
served as misses) until it answers. It does fail on a server without search, because
that is a deployment error no waiting fixes.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gateway.cache.eviction import CapacityLedger
from gateway.cache.limits import CapacitySettings, StoreLimits
from gateway.cache.vector_index_settings import VectorIndexSettings
from gateway.settings import StorageSettings
from gateway.storage.protocols import StoreUnavailable
from gateway.storage.redis.capacity import RedisCapacity, escape_key_part
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.exact import RedisExactCache
from gateway.storage.redis.lock import RedisLock
from gateway.storage.redis.vectors import RedisVectorIndex
from gateway.storage.redis.version_watch import VersionWatch

_KNOWLEDGE_VERSION_MEMORY_SECONDS: float = StorageSettings.model_fields[
    "redis_knowledge_version_memory_seconds"
].default

logger = logging.getLogger(__name__)

_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# `index_name_for` ends every name with "-<dimensions>d".
_DIMENSIONS_SUFFIX = re.compile(r"-(\d+)d\Z")


_escape_part = escape_key_part


def _store_capacity(
    connection: RedisConnection,
    prefix: str,
    store: str,
    limits: StoreLimits,
    ledger: CapacityLedger | None,
) -> RedisCapacity:
    return RedisCapacity(connection, f"{prefix}:capacity:{store}", store, limits, ledger)


def _optional_capacity(
    connection: RedisConnection,
    prefix: str,
    store: str,
    capacity: CapacitySettings | None,
    ledger: CapacityLedger | None,
) -> RedisCapacity | None:
    """The caps of the semantic index or the exact cache; None (uncapped: Redis's own
    `maxmemory` alone bounds the store) without `capacity`."""
    if capacity is None:
        return None
    limits = capacity.semantic_index if store == "semantic" else capacity.exact_cache
    return _store_capacity(connection, prefix, store, limits, ledger)


def dimensions_from_index_name(index_name: str) -> int | None:
    match = _DIMENSIONS_SUFFIX.search(index_name)
    return int(match.group(1)) if match else None


@dataclass(slots=True)
class RedisBackend:
    connection: RedisConnection
    exact: RedisExactCache
    semantic: RedisVectorIndex
    lock: RedisLock
    # The knowledge versions this process may answer from memory (`version_watch.py`).
    knowledge_versions: VersionWatch
    prefix: str = "gateway"
    # With capacity settings, the stores keep their `capacity:` caps in Redis.
    capacity: CapacitySettings | None = None
    ledger: CapacityLedger | None = None

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        prefix: str = "gateway",
        index_name: str,
        dimensions: int | None = None,
        clock: Callable[[], float] = time.time,
        capacity: CapacitySettings | None = None,
        ledger: CapacityLedger | None = None,
        vector_index: VectorIndexSettings | None = None,
        knowledge_version_memory_seconds: float = _KNOWLEDGE_VERSION_MEMORY_SECONDS,
        **connection_options: Any,
    ) -> RedisBackend:
        """`index_name` comes from `index_name_for(embedder, dimensions)`; the dimensions
        are read from its suffix unless given. `connection_options` go to
        `RedisConnection` (timeouts, back-off). Without `capacity` the stores are
        uncapped (Redis's own `maxmemory` alone bounds them)."""
        if not _PREFIX.fullmatch(prefix):
            raise ValueError(f"unsafe key prefix {prefix!r}")
        dimensions = _index_dimensions(index_name, dimensions)
        connection = RedisConnection(url, **connection_options)
        try:
            try:
                await connection.check_search_module()
            except StoreUnavailable:
                logger.warning(
                    "redis at %s is unavailable at start-up; caches fail open until it answers",
                    connection.address,
                )
            semantic_caps = _optional_capacity(connection, prefix, "semantic", capacity, ledger)
            semantic = await RedisVectorIndex.open(
                connection,
                index_name,
                dimensions,
                prefix=prefix,
                clock=clock,
                capacity=semantic_caps,
                settings=vector_index,
            )
        except BaseException:
            await connection.close()
            raise
        exact_caps = _optional_capacity(connection, prefix, "exact", capacity, ledger)
        return cls(
            connection=connection,
            exact=RedisExactCache(connection, prefix=prefix, capacity=exact_caps),
            semantic=semantic,
            lock=RedisLock(connection, prefix=prefix),
            knowledge_versions=VersionWatch(
                connection.endpoint,
                f"{prefix}:knowledge-versions",
                max_age_seconds=knowledge_version_memory_seconds,
                connect_timeout_seconds=connection.connect_timeout_seconds,
            ),
            prefix=prefix,
            capacity=capacity,
            ledger=ledger,
        )

    def sessions_capacity(self) -> RedisCapacity | None:
        if self.capacity is None:
            return None
        return _store_capacity(
            self.connection, self.prefix, "sessions", self.capacity.sessions, self.ledger
        )

    def store_capacity(self, store: str, limits: StoreLimits) -> RedisCapacity:
        """The Redis-kept caps of a store added on this connection (its books under
        `<prefix>:capacity:<store>`)."""
        return _store_capacity(self.connection, self.prefix, store, limits, self.ledger)

    def key(self, *parts: str) -> str:
        """`<prefix>:<part>:<part>...`, each part escaped so that no two tuples of
        parts share a key. Start with the store's name: key("memory", tenant, user)."""
        if not parts or not all(parts):
            raise ValueError("key parts must be non-empty strings")
        return ":".join((self.prefix, *(_escape_part(part) for part in parts)))

    async def vectors(
        self,
        index_name: str,
        dimensions: int | None = None,
        clock: Callable[[], float] = time.time,
    ) -> RedisVectorIndex:
        """Another vector index on the same connection (another embedder or use)."""
        if dimensions is None:
            dimensions = dimensions_from_index_name(index_name)
            if dimensions is None:
                raise ValueError(f"cannot tell dimensions from {index_name!r}; pass dimensions")
        return await RedisVectorIndex.open(
            self.connection, index_name, dimensions, prefix=self.prefix, clock=clock
        )

    def state(self) -> dict[str, Any]:
        return self.connection.state()

    async def ping(self) -> bool:
        return await self.connection.ping()

    async def close(self) -> None:
        await self.knowledge_versions.close()
        await self.semantic.close()
        await self.exact.close()
        await self.connection.close()


def _index_dimensions(index_name: str, dimensions: int | None) -> int:
    """The given dimensions, checked against the index name's suffix, or that suffix."""
    parsed = dimensions_from_index_name(index_name)
    if dimensions is None:
        if parsed is None:
            raise ValueError(f"cannot tell dimensions from {index_name!r}; pass dimensions")
        return parsed
    if parsed is not None and parsed != dimensions:
        raise ValueError(f"index {index_name!r} is not for {dimensions} dimensions")
    return dimensions
