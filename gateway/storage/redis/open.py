"""Open the Redis backend, shared by every replica that points at the same Redis and
prefix. Imported only when the configuration asks for it (`storage.open_storage`), so
the Redis client is never loaded for the embedded backend."""

from __future__ import annotations

from typing import Any

from gateway.cache.eviction import CapacityLedger
from gateway.cache.limits import CapacitySettings
from gateway.settings import StorageSettings
from gateway.storage.opened import FlightStores, Storage
from gateway.storage.redis.adaptive import RedisAdaptiveStore
from gateway.storage.redis.audit_trail import RedisAuditStore
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.redis.keys import RedisKeyStore
from gateway.storage.redis.knowledge import RedisKnowledgeStore
from gateway.storage.redis.memory import RedisMemoryStore
from gateway.storage.redis.rate_limiter import RedisRateLimiter
from gateway.storage.redis.responses import RedisResponseStore
from gateway.storage.redis.sessions import RedisSessionStore
from gateway.storage.redis.spend import RedisSpendStore
from gateway.storage.redis.tasks import RedisTaskStore
from gateway.storage.redis.tool_cache import RedisToolCache


async def open_redis_storage(
    settings: StorageSettings, index_name: str, dimensions: int, capacity: CapacitySettings
) -> Storage:
    assert settings.redis_url is not None  # enforced by StorageSettings
    ledger = CapacityLedger()
    backend = await RedisBackend.open(
        settings.redis_url,
        prefix=settings.redis_prefix,
        index_name=index_name,
        dimensions=dimensions,
        operation_timeout_seconds=settings.redis_timeout_seconds,
        connect_timeout_seconds=settings.redis_connect_timeout_seconds,
        capacity=capacity,
        vector_index=settings.vector_index,
        ledger=ledger,
        knowledge_version_memory_seconds=settings.redis_knowledge_version_memory_seconds,
    )
    memories = RedisMemoryStore(backend, capacity.memories)
    sessions = RedisSessionStore(backend, backend.sessions_capacity())
    tool_cache = RedisToolCache(
        backend.connection,
        backend.prefix,
        backend.store_capacity("tool_cache", capacity.tool_cache),
    )

    async def sweep() -> int:
        # Redis expires the entries itself; this drops their bookkeeping.
        return (
            await backend.exact.sweep_expired()
            + await backend.semantic.sweep_expired()
            + await sessions.sweep_expired()
            + await tool_cache.sweep_expired()
        )

    async def describe() -> dict[str, Any]:
        await backend.ping()  # refreshes the circuit when Redis came back
        return backend.state()

    return Storage(
        backend="redis",
        exact=backend.exact,
        vectors=backend.semantic,
        # Replicas share the lease and the exact cache the leader's answer lands in.
        flight=FlightStores(backend.lock, backend.exact),
        memories=memories,
        sessions=sessions,
        describe=describe,
        close=backend.close,
        sweep=sweep,
        ledger=ledger,
        adaptive=RedisAdaptiveStore(backend),
        responses=RedisResponseStore(backend),
        tasks=RedisTaskStore(backend),
        tool_cache=tool_cache,
        knowledge=RedisKnowledgeStore(backend),
        keys=RedisKeyStore(backend),
        audit=RedisAuditStore(backend),
        spend=RedisSpendStore(backend),
        rate_limiter=RedisRateLimiter(backend.connection, backend.prefix),
    )
