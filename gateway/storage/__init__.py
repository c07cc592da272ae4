"""Storage: every store behind the protocols of `storage.protocols`, in one of two
backends, embedded (`storage/embedded/`: SQLite + in-process vectors, the default) or
Redis (`storage/redis/`: shared by replicas).

`open_storage` is the only place that chooses between them. The Redis modules (and the
Redis client) are imported only when the Redis backend is opened.
"""

from __future__ import annotations

from gateway.cache.limits import CapacitySettings
from gateway.settings import StorageSettings
from gateway.storage.embedded.open import open_embedded_storage
from gateway.storage.index_name import index_name_for
from gateway.storage.opened import FlightStores, Storage

__all__ = ["FlightStores", "Storage", "open_storage"]


async def open_storage(
    settings: StorageSettings,
    embedder_name: str,
    dimensions: int,
    capacity: CapacitySettings | None = None,
) -> Storage:
    index_name = index_name_for(embedder_name, dimensions)
    capacity = capacity or CapacitySettings()
    if settings.backend == "redis":
        from gateway.storage.redis.open import open_redis_storage

        return await open_redis_storage(settings, index_name, dimensions, capacity)
    return await open_embedded_storage(settings, index_name, capacity)
