"""A repeated question over a user's memories is answered from the memo of the scope's
index: without ranking or embedding again, never after the memories changed, nor past
the moment a memory starts or stops holding."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gateway.auth import Principal
from gateway.memory.limits import ModelLimits
from gateway.memory.records import MemoryScope
from gateway.memory.service import MemoryService, NewMemory
from gateway.memory.tokens import Tokenizers
from gateway.pipeline.memory import MemoryStage
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.values import Timings
from gateway.policy.models import Policy
from gateway.storage.embedded.memory import open_embedded_memory
from tests.unit.memory.fakes import TableEmbedder

ALICE = MemoryScope("acme", "alice")
POLICY = Policy()
QUESTION = "which tea does alice like?"
NOW = 1_760_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def parts(tmp_path: Path) -> AsyncIterator[tuple[MemoryService, TableEmbedder, Clock]]:
    store, sessions, database = await open_embedded_memory(tmp_path)
    embedder = TableEmbedder({}, [1.0, 0.0])
    clock = Clock()
    yield MemoryService(store, sessions, embedder, clock=clock), embedder, clock
    await database.close()


async def _found(service: MemoryService) -> list[str]:
    results = await service.search(ALICE, QUESTION, 5, POLICY.memory)
    return [scored.record.content for scored in results]


async def test_a_repeated_search_neither_embeds_nor_ranks_again(
    parts: tuple[MemoryService, TableEmbedder, Clock],
) -> None:
    service, embedder, _ = parts
    await service.add(ALICE, [NewMemory(content="Alice likes green tea.")], POLICY.memory)
    calls = embedder.calls
    first = await _found(service)
    assert first == ["Alice likes green tea."] and embedder.calls == calls + 1
    assert await _found(service) == first
    assert embedder.calls == calls + 1


async def test_a_new_memory_is_never_hidden_by_the_memo(
    parts: tuple[MemoryService, TableEmbedder, Clock],
) -> None:
    service, _, _ = parts
    await service.add(ALICE, [NewMemory(content="Alice likes green tea.")], POLICY.memory)
    assert await _found(service) == ["Alice likes green tea."]
    await service.add(ALICE, [NewMemory(content="Alice also likes black tea.")], POLICY.memory)
    assert "Alice also likes black tea." in await _found(service)


async def test_a_fact_that_stops_holding_leaves_the_memo(
    parts: tuple[MemoryService, TableEmbedder, Clock],
) -> None:
    service, _, clock = parts
    fact = NewMemory(content="Alice likes the winter tea blend.", valid_to=NOW + 10)
    await service.add(ALICE, [fact], POLICY.memory)
    assert await _found(service) == ["Alice likes the winter tea blend."]
    clock.now = NOW + 11  # within the memo's minute, past the fact's end
    assert await _found(service) == []


async def test_the_memory_stage_embeds_a_repeated_question_once(
    parts: tuple[MemoryService, TableEmbedder, Clock],
) -> None:
    service, embedder, _ = parts
    await service.add(ALICE, [NewMemory(content="Alice likes green tea.")], POLICY.memory)
    stage = MemoryStage(service, Tokenizers(), ModelLimits({}, {}))
    calls = embedder.calls
    injected = []
    for _ in range(2):
        request = ChatRequest(
            request_id=uuid.uuid4().hex,
            principal=Principal("acme"),
            model="gpt-4o-mini",
            body={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": QUESTION}]},
            policy=POLICY,
            user="alice",
        )
        injected.append((await stage.run(request, Timings())).items)
    assert injected == [1, 1]
    assert embedder.calls == calls + 1
    await service.close()
