"""Knowledge and memories in one turn: ranked together by score, labelled by source,
cached by the session with their source, and dropped from it once gone from the
request's knowledge scope."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gateway.knowledge.records import KnowledgeRecord, KnowledgeScope
from gateway.knowledge.service import KnowledgeService
from gateway.memory.inject import memory_line
from gateway.memory.records import MemoryRecord, MemoryScope
from gateway.memory.retrieval import ScopeIndex, ScoredMemory
from gateway.memory.service import MemoryService
from gateway.memory.session import merge_turn, this_turn
from gateway.memory.tokens import Tokenizers
from gateway.policy.memory import SessionMemoryPolicy
from gateway.policy.models import Policy
from gateway.storage.embedded.knowledge import SQLiteKnowledgeStore
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.serialise import session_items_from_json, session_items_to_json
from tests.unit.memory.fakes import TableEmbedder

SETTINGS = SessionMemoryPolicy(admit_min_score=0.0, capacity=10, inject_top_n=10)


def scored(content: str, score: float, item_id: str) -> ScoredMemory:
    record = MemoryRecord(id=item_id, tenant="t", user="u", content=content, created_at=0.0)
    return ScoredMemory(record, score, dense=score, keyword=0.0, relevance=score)


def test_memories_and_knowledge_rank_together_by_score_with_their_label() -> None:
    memories = [scored("Prefers tea.", 0.9, "mem_1"), scored("Lives in Lyon.", 0.3, "mem_2")]
    knowledge = [scored("Refunds take nine days.", 0.6, "kn_1")]
    ranked = this_turn(memories, knowledge)
    assert [(c.memory_id, c.source) for c in ranked] == [
        ("mem_1", "memory"),
        ("kn_1", "knowledge"),
        ("mem_2", "memory"),
    ]
    assert memory_line(ranked[1]).startswith("- [knowledge, 1970-01-01] Refunds")
    assert memory_line(ranked[0]) == "- [memory, 1970-01-01] Prefers tea."


def test_the_session_keeps_the_source_of_what_it_cached() -> None:
    turn = merge_turn([], [], SETTINGS, 1.0, knowledge=[scored("Rule.", 0.8, "kn_1")])
    (item,) = turn.session_items
    assert item.source == "knowledge"
    (stored,) = session_items_from_json(session_items_to_json(turn.session_items))
    assert stored == item
    later = merge_turn(turn.session_items, [], SETTINGS, 2.0)
    assert [(c.memory_id, c.source) for c in later.to_inject] == [("kn_1", "knowledge")]


async def test_a_cached_knowledge_item_lives_only_while_in_the_scope(tmp_path: Path) -> None:
    store, sessions, database = await open_embedded_memory(tmp_path)
    knowledge_store = await SQLiteKnowledgeStore.open(tmp_path)
    embedder = TableEmbedder({}, [1.0, 0.0])
    memory = MemoryService(store, sessions, embedder)
    knowledge = KnowledgeService(knowledge_store, embedder, Tokenizers().for_model(""))
    vector = np.asarray([1.0, 0.0], dtype=np.float32)
    item = KnowledgeRecord("kn_1", "acme", "Refunds take nine days.", 0.0, "d", vector=vector)
    await knowledge_store.add([item], max_items=10)
    scope, policy = MemoryScope("acme", "alice"), Policy().memory
    hit = ScoredMemory(item.as_memory(), 0.8, 0.8, 0.0, relevance=0.8)

    async def turn(index: ScopeIndex | None) -> list[str]:
        result = await memory.session_turn(scope, "s", [], policy, knowledge_index=index)
        return [candidate.memory_id for candidate in result.to_inject]

    await memory.session_turn(scope, "s", [], policy, knowledge=[hit])
    assert await turn(await knowledge.scope_index(KnowledgeScope("acme"))) == ["kn_1"]
    # Knowledge turned off (no index): the cached item is not injected.
    assert await turn(None) == []
    await memory.session_turn(scope, "s", [], policy, knowledge=[hit])
    await knowledge_store.delete("acme", "kn_1")
    assert await turn(await knowledge.scope_index(KnowledgeScope("acme"))) == []
    await knowledge_store.close()
    await database.close()
