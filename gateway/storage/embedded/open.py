"""Open the embedded backend: SQLite files in the data directory and in-process
indexes; one process, nothing else running."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from gateway.cache.eviction import CapacityLedger
from gateway.cache.limits import CapacitySettings
from gateway.settings import StorageSettings
from gateway.storage.embedded.adaptive import SQLiteAdaptiveStore
from gateway.storage.embedded.audit_trail import SQLiteAuditStore
from gateway.storage.embedded.exact import SQLiteExactCache
from gateway.storage.embedded.keys import SQLiteKeyStore
from gateway.storage.embedded.knowledge import SQLiteKnowledgeStore
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.embedded.rate_limiter import InProcessRateLimiter
from gateway.storage.embedded.responses import SQLiteResponseStore
from gateway.storage.embedded.spend import SQLiteSpendStore
from gateway.storage.embedded.tasks import SQLiteTaskStore
from gateway.storage.embedded.tool_cache import SQLiteToolCache
from gateway.storage.embedded.vectors import EmbeddedVectorIndex
from gateway.storage.opened import FlightStores, Storage


class _Pings(Protocol):
    async def ping(self) -> bool: ...


class _Sweeps(Protocol):
    async def sweep_expired(self) -> int: ...


class _Closes(Protocol):
    async def close(self) -> None: ...


class _Ready(_Pings, _Closes, Protocol):
    pass


def _operations(
    pinged: tuple[_Pings, ...], swept: tuple[_Sweeps, ...], closed: tuple[_Closes, ...]
) -> tuple[
    Callable[[], Awaitable[dict[str, Any]]],
    Callable[[], Awaitable[None]],
    Callable[[], Awaitable[int]],
]:
    """The backend's /readyz description, close and expiry sweep over its stores."""

    async def describe() -> dict[str, Any]:
        available = True
        for store in pinged:
            if not await store.ping():
                available = False
                break
        return {"backend": "embedded", "available": available}

    async def close() -> None:
        for store in closed:
            await store.close()

    async def sweep() -> int:
        return sum([await store.sweep_expired() for store in swept])

    return describe, close, sweep


async def open_embedded_storage(
    settings: StorageSettings, index_name: str, capacity: CapacitySettings
) -> Storage:
    ledger = CapacityLedger()
    exact = await SQLiteExactCache.open(settings.path, capacity.exact_cache, ledger)
    vectors = await EmbeddedVectorIndex.open(
        settings.path, index_name, limits=capacity.semantic_index, ledger=ledger
    )
    memories, sessions, memory_db = await open_embedded_memory(
        settings.path, capacity.sessions, ledger, capacity.memories
    )
    adaptive = await SQLiteAdaptiveStore.open(settings.path)
    responses = await SQLiteResponseStore.open(settings.path)
    tasks = await SQLiteTaskStore.open(settings.path)
    tool_cache = await SQLiteToolCache.open(settings.path, capacity.tool_cache, ledger)
    knowledge = await SQLiteKnowledgeStore.open(settings.path)
    keys = await SQLiteKeyStore.open(settings.path)
    audit = await SQLiteAuditStore.open(settings.path)
    spend = await SQLiteSpendStore.open(settings.path)

    # Every database is pinged for /readyz, the expiring tables are swept, and all close
    # newest first (what was opened last may depend on what was opened before it).
    later: tuple[_Ready, ...] = (responses, tasks, tool_cache, knowledge, keys, audit, spend)
    pinged: tuple[_Pings, ...] = (exact, vectors, memory_db, *later)
    swept: tuple[_Sweeps, ...] = (exact, vectors, sessions, responses, tool_cache, spend)
    closed: tuple[_Closes, ...] = (*reversed(later), adaptive, memory_db, vectors, exact)

    describe, close, sweep = _operations(pinged, swept, closed)
    return Storage(
        backend="embedded",
        exact=exact,
        vectors=vectors,
        # One process: single flight's in-process futures are the whole coordination.
        flight=FlightStores(),
        memories=memories,
        sessions=sessions,
        describe=describe,
        close=close,
        sweep=sweep,
        ledger=ledger,
        adaptive=adaptive,
        responses=responses,
        tasks=tasks,
        tool_cache=tool_cache,
        knowledge=knowledge,
        keys=keys,
        audit=audit,
        spend=spend,
        rate_limiter=InProcessRateLimiter(),
    )
