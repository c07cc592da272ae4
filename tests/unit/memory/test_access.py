"""Access counts of injected memories are written after the response, in order, and
none is lost silently: a failed write stays queued, a full queue is counted."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from gateway.memory.access import AccessRecorder
from gateway.memory.records import MemoryScope
from gateway.memory.service import MemoryService, NewMemory
from gateway.policy.memory import MemoryPolicy
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.protocols import MemoryStore, StoreUnavailable
from tests.unit.memory.fakes import TableEmbedder

NOW = 1_760_000_000.0
ALICE = MemoryScope("acme", "alice")


class FlakyTouches:
    """The embedded store, whose `touch` fails while `failing` is set."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self.failing = False

    async def touch(self, tenant: str, memory_ids: Sequence[str], at: float) -> None:
        if self.failing:
            raise StoreUnavailable("down")
        await self._store.touch(tenant, memory_ids, at)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[MemoryService]:
    store, sessions, database = await open_embedded_memory(tmp_path)
    yield MemoryService(store, sessions, TableEmbedder({}, [1.0, 0.0]), clock=lambda: NOW)
    await database.close()


async def _count(service: MemoryService, memory_id: str) -> tuple[int, float | None]:
    stored = await service.store.get("acme", memory_id)
    assert stored is not None
    return stored.access_count, stored.last_access_at


async def test_uses_are_written_after_the_call_returns(service: MemoryService) -> None:
    (record,) = await service.add(ALICE, [NewMemory(content="Likes tea.")], MemoryPolicy())
    service.touch_later("acme", [record.id])
    service.touch_later("acme", [record.id])
    # Queued, not written: the request goes on without waiting for the store.
    assert service.access.pending == 2
    assert await _count(service, record.id) == (0, None)
    await service.access.drain()
    assert service.access.pending == 0
    assert await _count(service, record.id) == (2, NOW)


async def test_a_failed_write_stays_queued_is_counted_and_written_at_close(
    service: MemoryService,
) -> None:
    (record,) = await service.add(ALICE, [NewMemory(content="Likes tea.")], MemoryPolicy())
    flaky = FlakyTouches(service.store)
    failures: list[tuple[str, str]] = []
    recorder = AccessRecorder(flaky)
    recorder.count_failures_with(lambda store, operation: failures.append((store, operation)))
    flaky.failing = True
    recorder.record("acme", [record.id], NOW)
    await recorder.drain()
    assert recorder.pending == 1 and recorder.failed_writes == 1
    assert failures == [("memory", "touch")]
    assert await _count(service, record.id) == (0, None)
    flaky.failing = False
    await recorder.close()
    assert recorder.pending == 0
    assert await _count(service, record.id) == (1, NOW)


async def test_a_full_queue_refuses_and_counts(service: MemoryService) -> None:
    failures: list[tuple[str, str]] = []
    recorder = AccessRecorder(
        service.store, lambda s, o: failures.append((s, o)), max_pending_writes=2
    )
    for _ in range(3):
        recorder.record("acme", ["m-unknown"], NOW)
    assert recorder.pending == 2 and recorder.refused == 1
    assert failures == [("memory", "queue_full")]
    await recorder.close()
    assert recorder.pending == 0
