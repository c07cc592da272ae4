"""Open the embedded backend: SQLite files in the data directory and in-process
indexes; one process, nothing else running."""

from __future__ import annotations

from typing import Any

from gateway.cache.eviction import CapacityLedger
from gateway.cache.limits import CapacitySettings
from gateway.settings import StorageSettings
from gateway.storage.embedded.adaptive import SQLiteAdaptiveStore
from gateway.storage.embedded.exact import SQLiteExactCache
from gateway.storage.embedded.knowledge import SQLiteKnowledgeStore
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.embedded.responses import SQLiteResponseStore
from gateway.storage.embedded.vectors import EmbeddedVectorIndex
from gateway.storage.opened import FlightStores, Storage


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
    knowledge = await SQLiteKnowledgeStore.open(settings.path)

    async def describe() -> dict[str, Any]:
        available = (
            await exact.ping()
            and await vectors.ping()
            and await memory_db.ping()
            and await responses.ping()
            and await knowledge.ping()
        )
        return {"backend": "embedded", "available": available}

    async def close() -> None:
        await knowledge.close()
        await responses.close()
        await adaptive.close()
        await memory_db.close()
        await vectors.close()
        await exact.close()

    async def sweep() -> int:
        return (
            await exact.sweep_expired()
            + await vectors.sweep_expired()
            + await sessions.sweep_expired()
            + await responses.sweep_expired()
        )

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
        knowledge=knowledge,
    )
