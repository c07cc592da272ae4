"""Open the configured storage backend: embedded (SQLite + in-process vectors) or Redis
(shared by replicas). Both give the same stores behind the same protocols."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from gateway.adaptive.store import AdaptiveCounterStore, SQLiteAdaptiveStore
from gateway.cache.embedded import SQLiteExactCache
from gateway.cache.eviction import CapacityLedger
from gateway.cache.limits import CapacitySettings
from gateway.cache.locks import InProcessLock, Lock
from gateway.cache.protocols import ExactCache
from gateway.cache.vector_index import EmbeddedVectorIndex, VectorIndex, index_name_for
from gateway.memory.embedded_store import open_embedded_memory
from gateway.memory.store import MemoryStore, SessionStore
from gateway.settings import StorageSettings


@dataclass(frozen=True, slots=True)
class Storage:
    backend: str
    exact: ExactCache
    vectors: VectorIndex
    lock: Lock
    memories: MemoryStore
    sessions: SessionStore
    describe: Callable[[], Awaitable[dict[str, Any]]]  # for /readyz
    close: Callable[[], Awaitable[None]]
    # Deletes expired entries (the background sweep); returns how many went.
    sweep: Callable[[], Awaitable[int]]
    # Entries, bytes and evictions of the capped stores (on Redis: the shared totals as
    # of this process's last write or sweep, and the evictions this process made).
    ledger: CapacityLedger
    # The adaptive operating point's counters (embedded: SQLite; Redis: shared).
    adaptive: AdaptiveCounterStore


async def open_storage(
    settings: StorageSettings,
    embedder_name: str,
    dimensions: int,
    capacity: CapacitySettings | None = None,
) -> Storage:
    index_name = index_name_for(embedder_name, dimensions)
    capacity = capacity or CapacitySettings()
    if settings.backend == "redis":
        return await _open_redis(settings, index_name, dimensions, capacity)
    ledger = CapacityLedger()
    exact = await SQLiteExactCache.open(settings.path, capacity.exact_cache, ledger)
    vectors = await EmbeddedVectorIndex.open(
        settings.path, index_name, limits=capacity.semantic_index, ledger=ledger
    )
    memories, sessions, memory_db = await open_embedded_memory(
        settings.path, capacity.sessions, ledger, capacity.memories
    )
    adaptive = await SQLiteAdaptiveStore.open(settings.path)

    async def describe() -> dict[str, Any]:
        available = await exact.ping() and await vectors.ping() and await memory_db.ping()
        return {"backend": "embedded", "available": available}

    async def close() -> None:
        await adaptive.close()
        await memory_db.close()
        await vectors.close()
        await exact.close()

    async def sweep() -> int:
        return (
            await exact.sweep_expired()
            + await vectors.sweep_expired()
            + await sessions.sweep_expired()
        )

    return Storage(
        "embedded",
        exact,
        vectors,
        InProcessLock(),
        memories,
        sessions,
        describe,
        close,
        sweep,
        ledger,
        adaptive,
    )


async def _open_redis(
    settings: StorageSettings, index_name: str, dimensions: int, capacity: CapacitySettings
) -> Storage:
    from gateway.adaptive.store import RedisAdaptiveStore
    from gateway.cache.redis_backend import RedisBackend
    from gateway.memory.redis_store import RedisMemoryStore, RedisSessionStore

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
        ledger=ledger,
    )
    memories = RedisMemoryStore(backend, capacity.memories)
    sessions = RedisSessionStore(backend, backend.sessions_capacity())

    async def sweep() -> int:
        # Redis expires the entries itself; this drops their bookkeeping.
        return (
            await backend.exact.sweep_expired()
            + await backend.semantic.sweep_expired()
            + await sessions.sweep_expired()
        )

    async def describe() -> dict[str, Any]:
        await backend.ping()  # refreshes the circuit when Redis came back
        return backend.state()

    return Storage(
        "redis",
        backend.exact,
        backend.semantic,
        backend.lock,
        memories,
        sessions,
        describe,
        backend.close,
        sweep,
        ledger,
        RedisAdaptiveStore(backend),
    )
