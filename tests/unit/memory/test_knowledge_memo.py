"""A repeated knowledge question is answered from the memo of the scope's index, never
after the tenant's knowledge changed, nor after the memo's age."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gateway.knowledge.records import KnowledgeScope
from gateway.knowledge.service import KnowledgeBatch, KnowledgeService, NewKnowledge
from gateway.memory.search_memo import DEFAULT_MAX_AGE_SECONDS
from gateway.memory.tokens import Tokenizers
from gateway.policy.models import Policy
from gateway.storage.embedded.knowledge import SQLiteKnowledgeStore
from tests.unit.memory.fakes import TableEmbedder

ACME = KnowledgeScope("acme")
POLICY = Policy()
RANKING = POLICY.memory.ranking
QUESTION = "how long do refunds take?"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def parts(tmp_path: Path) -> AsyncIterator[tuple[KnowledgeService, Clock, TableEmbedder]]:
    store = await SQLiteKnowledgeStore.open(tmp_path)
    embedder = TableEmbedder({}, [1.0, 0.0])
    clock = Clock()
    service = KnowledgeService(store, embedder, Tokenizers().for_model(""), memo_clock=clock)
    yield service, clock, embedder
    await store.close()


async def _add(service: KnowledgeService, *texts: str) -> None:
    items = [NewKnowledge(content=text) for text in texts]
    await service.add(KnowledgeBatch(ACME, items=items), POLICY.knowledge)


async def _search(service: KnowledgeService) -> list[str]:
    index = await service.scope_index(ACME)
    vector = (await TableEmbedder({}, [1.0, 0.0]).embed([QUESTION]))[0]
    results = await service.search(ACME, QUESTION, 5, RANKING, vector, index=index)
    return [scored.record.content for scored in results]


async def _memoised(service: KnowledgeService) -> list[str] | None:
    index = await service.scope_index(ACME)
    found = service.memoised(ACME, QUESTION, 5, RANKING, index)
    return None if found is None else [scored.record.content for scored in found]


async def test_a_repeated_question_is_answered_from_the_memo(
    parts: tuple[KnowledgeService, Clock, TableEmbedder],
) -> None:
    service, _, _ = parts
    await _add(service, "Refunds take nine days.", "Shipping is free over 50 euros.")
    assert await _memoised(service) is None
    first = await _search(service)
    assert "Refunds take nine days." in first
    assert await _memoised(service) == first
    # Another question, or the same with another top_k, is not the memo's.
    index = await service.scope_index(ACME)
    assert service.memoised(ACME, "shipping costs?", 5, RANKING, index) is None
    assert service.memoised(ACME, QUESTION, 3, RANKING, index) is None


async def test_new_knowledge_is_never_hidden_by_the_memo(
    parts: tuple[KnowledgeService, Clock, TableEmbedder],
) -> None:
    service, _, _ = parts
    await _add(service, "Refunds take nine days.")
    await _search(service)
    assert await _memoised(service) == ["Refunds take nine days."]
    await _add(service, "Refunds of gift cards take two days.")
    # The version changed: the scope is indexed again, with an empty memo.
    assert await _memoised(service) is None
    assert "Refunds of gift cards take two days." in await _search(service)
    memo = await _memoised(service)
    assert memo is not None and "Refunds of gift cards take two days." in memo


async def test_a_deleted_item_is_never_served_from_the_memo(
    parts: tuple[KnowledgeService, Clock, TableEmbedder],
) -> None:
    service, _, _ = parts
    await _add(service, "Refunds take nine days.", "Refunds need the receipt.")
    index_records = (await service.scope_index(ACME)).records
    await _search(service)
    gone = next(r for r in index_records if r.content == "Refunds take nine days.")
    assert await service.store.delete("acme", gone.id)
    assert await _memoised(service) is None
    assert "Refunds take nine days." not in await _search(service)


async def test_the_memo_expires_and_keeps_no_ranking_made_without_a_vector(
    parts: tuple[KnowledgeService, Clock, TableEmbedder],
) -> None:
    service, clock, _ = parts
    await _add(service, "Refunds take nine days.")
    await _search(service)
    clock.now = DEFAULT_MAX_AGE_SECONDS
    assert await _memoised(service) is None
    index = await service.scope_index(ACME)
    await service.search(ACME, QUESTION, 5, RANKING, None, index=index)
    assert await _memoised(service) is None
