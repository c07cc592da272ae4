"""Session cache writes behind the reply: never raised into the turn, counted when they
fail, and waited for on close."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from gateway.memory.records import MemoryScope
from gateway.memory.service import MemoryService, NewMemory
from gateway.memory.session_writes import SessionWrites
from gateway.policy.models import Policy
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.protocols import StoreUnavailable
from tests.unit.memory.fakes import TableEmbedder


async def _failing_write() -> None:
    raise StoreUnavailable("session store down: secret prompt text")


async def test_a_failed_write_is_counted_and_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    counted: list[tuple[str, str]] = []
    writes = SessionWrites()
    writes.count_failures_with(lambda store, operation: counted.append((store, operation)))
    with caplog.at_level(logging.WARNING, logger="gateway.memory.session_writes"):
        writes.submit("s1", _failing_write())
        await writes.drain()
    assert writes.failed == 1
    assert counted == [("memory", "session_save")]
    assert "StoreUnavailable" in caplog.text
    assert "secret prompt text" not in caplog.text


async def test_drain_waits_for_writes_under_way() -> None:
    release = asyncio.Event()
    done: list[int] = []

    async def slow_write(number: int) -> None:
        await release.wait()
        done.append(number)

    writes = SessionWrites()
    for number in range(3):
        writes.submit(f"s{number}", slow_write(number))
    assert writes.pending == 3
    asyncio.get_running_loop().call_later(0.01, release.set)
    await writes.drain()
    assert sorted(done) == [0, 1, 2]
    assert writes.pending == 0


async def test_a_turn_does_not_wait_for_its_write_and_close_does(tmp_path: Path) -> None:
    store, sessions, database = await open_embedded_memory(tmp_path)
    service = MemoryService(store, sessions, TableEmbedder({}, [1.0, 0.0]))
    policy = Policy().memory
    scope = MemoryScope("t", "u")
    await service.add(scope, [NewMemory("The kettle is in the hall.")], policy)
    retrieved = await service.search(scope, "kettle in the hall", 3, policy)
    assert retrieved
    turn = await service.session_turn(scope, "s1", retrieved, policy)
    assert turn.session_items
    assert service.session_writes.failed == 0
    await service.close()
    assert service.session_writes.pending == 0
    stored = await sessions.load("t", "u", "s1")
    assert [item.content for item in stored] == [item.content for item in turn.session_items]
    await database.close()


async def test_a_read_of_a_session_waits_for_its_write_and_no_other() -> None:
    release = asyncio.Event()
    written: list[str] = []

    async def held_write() -> None:
        await release.wait()
        written.append("s1")

    writes = SessionWrites()
    writes.submit("s1", held_write())
    await asyncio.wait_for(writes.settled("s2"), timeout=1.0)  # another session: at once
    reading = asyncio.ensure_future(writes.settled("s1"))
    await asyncio.sleep(0.01)
    assert not reading.done()
    release.set()
    await asyncio.wait_for(reading, timeout=1.0)
    assert written == ["s1"]
    await writes.settled("s1")  # done: at once
