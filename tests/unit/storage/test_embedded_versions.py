"""The embedded stores answer the per-turn version reads (a user's memories, a tenant's
knowledge) from the process, without a hop to the database thread, and never with a
version a write has replaced: a write drops the mirrored version inside its
transaction, and a read fills it on the database thread, in order with the writes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gateway.knowledge.records import KnowledgeRecord
from gateway.memory.records import MemoryRecord
from gateway.storage.embedded.database import SQLiteDatabase
from gateway.storage.embedded.knowledge import SQLiteKnowledgeStore
from gateway.storage.embedded.memory import SQLiteMemoryStore, open_embedded_memory
from gateway.storage.embedded.versions import VersionMirror
from gateway.storage.protocols import QuotaExceeded

VECTOR = np.asarray([1.0, 0.0], dtype=np.float32)


class CountingRuns:
    """Counts the work sent to a database's thread."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self.calls = 0
        self._run = database.run
        database.run = self.run  # type: ignore[method-assign]

    async def run(self, work: Callable[[], Any]) -> Any:
        self.calls += 1
        return await self._run(work)


def memory(memory_id: str, user: str = "alice") -> MemoryRecord:
    return MemoryRecord(
        id=memory_id,
        tenant="acme",
        user=user,
        content=f"fact {memory_id}",
        created_at=1.0,
        vector=VECTOR,
        embedder="e",
    )


def item(item_id: str, document: str = "d1") -> KnowledgeRecord:
    return KnowledgeRecord(item_id, "acme", f"item {item_id}", 1.0, document, vector=VECTOR)


@pytest.fixture
async def memories(tmp_path: Path) -> AsyncIterator[tuple[SQLiteMemoryStore, SQLiteDatabase]]:
    store, _sessions, database = await open_embedded_memory(tmp_path)
    yield store, database
    await database.close()


@pytest.fixture
async def knowledge(tmp_path: Path) -> AsyncIterator[SQLiteKnowledgeStore]:
    store = await SQLiteKnowledgeStore.open(tmp_path)
    yield store
    await store.close()


async def test_a_memory_version_is_read_from_the_database_once_until_a_write(
    memories: tuple[SQLiteMemoryStore, SQLiteDatabase],
) -> None:
    store, database = memories
    runs = CountingRuns(database)
    empty = await store.scope_version("acme", "alice")
    assert await store.scope_version("acme", "alice") == empty
    assert runs.calls == 1
    await store.add([memory("m1")])
    added = await store.scope_version("acme", "alice")
    assert added != empty
    await store.add([memory("b1", user="bob")])
    assert await store.scope_version("acme", "alice") == added
    await store.delete("acme", "m1")
    deleted = await store.scope_version("acme", "alice")
    assert deleted not in (empty, added)
    assert await store.scope_version("acme", "alice") == deleted


async def test_a_knowledge_version_moves_with_every_write_and_not_otherwise(
    knowledge: SQLiteKnowledgeStore,
) -> None:
    seen = [await knowledge.version("acme")]
    await knowledge.add([item("k1"), item("k2")], max_items=10)
    seen.append(await knowledge.version("acme"))
    await knowledge.add([item("k3", "d2")], max_items=10, replaces="d1")
    seen.append(await knowledge.version("acme"))
    await knowledge.delete("acme", "k3")
    seen.append(await knowledge.version("acme"))
    await knowledge.add([item("k4", "d3")], max_items=10)
    await knowledge.delete_document("acme", "d3")
    seen.append(await knowledge.version("acme"))
    assert len(set(seen)) == len(seen)
    # Writes that change nothing leave it where it is.
    assert not await knowledge.delete("acme", "missing")
    with pytest.raises(QuotaExceeded):
        await knowledge.add([item(f"q{n}", "d4") for n in range(20)], max_items=10)
    assert await knowledge.version("acme") == seen[-1]


async def test_reads_racing_writes_never_keep_a_replaced_version(
    memories: tuple[SQLiteMemoryStore, SQLiteDatabase],
) -> None:
    store, database = memories
    for round_ in range(20):
        # A read and a write sent together, in both orders: whichever the database
        # thread runs first, what is mirrored afterwards is what is committed.
        first, second = (
            (store.scope_version("acme", "alice"), store.add([memory(f"m{round_}")]))
            if round_ % 2
            else (store.add([memory(f"m{round_}")]), store.scope_version("acme", "alice"))
        )
        await asyncio.gather(first, second)
        committed = await database.run(
            lambda: str(
                database.connection.execute(
                    "SELECT version FROM memory_versions WHERE tenant = 'acme' AND user = 'alice'"
                ).fetchone()[0]
            )
        )
        assert await store.scope_version("acme", "alice") == committed


def test_the_mirror_starts_over_past_its_size() -> None:
    mirror = VersionMirror(max_entries=2)
    mirror.remember("a", "1")
    mirror.remember("b", "1")
    mirror.remember("c", "2")
    assert mirror.get("a") is None and mirror.get("c") == "2"
    mirror.forget("c")
    assert mirror.get("c") is None
