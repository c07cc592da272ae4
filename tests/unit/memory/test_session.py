"""The session knowledge cache's merge: admission, FIFO capacity, dedup, labels."""

from __future__ import annotations

from pathlib import Path

from gateway.memory.records import MemoryRecord, MemoryScope
from gateway.memory.retrieval import ScoredMemory
from gateway.memory.service import MemoryService, NewMemory
from gateway.memory.session import Origin, merge_turn
from gateway.memory.text import dedup_key
from gateway.policy.memory import SessionMemoryPolicy
from gateway.policy.models import Policy
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.protocols import SessionItem
from tests.unit.memory.fakes import TableEmbedder


def scored(
    content: str, score: float, memory_id: str | None = None, shared_terms: int = 0
) -> ScoredMemory:
    record = MemoryRecord(
        id=memory_id or f"m-{content}", tenant="t", user="u", content=content, created_at=0.0
    )
    return ScoredMemory(
        record, score, dense=score, keyword=0.0, relevance=score, shared_terms=shared_terms
    )


SETTINGS = SessionMemoryPolicy(admit_min_score=0.70, capacity=3, inject_top_n=2)


def test_only_items_at_or_above_the_threshold_are_admitted() -> None:
    turn = merge_turn([], [scored("a", 0.70), scored("b", 0.69)], SETTINGS, now=1.0)
    assert [item.content for item in turn.session_items] == ["a"]
    assert turn.changed


def test_the_floor_compares_the_calibrated_relevance_not_the_rank_score() -> None:
    record = MemoryRecord(id="m-r", tenant="t", user="u", content="r", created_at=0.0)
    # Ranked high (recency, use) but not likely evidence: not admitted; and the reverse.
    high_rank = ScoredMemory(record, 0.95, dense=0.9, keyword=0.9, relevance=0.4)
    turn = merge_turn([], [high_rank], SETTINGS, now=1.0)
    assert turn.session_items == []
    likely = ScoredMemory(record, 0.5, dense=0.2, keyword=0.2, relevance=0.75)
    assert [i.content for i in merge_turn([], [likely], SETTINGS, 1.0).session_items] == ["r"]


def test_a_turns_best_items_sharing_its_terms_are_admitted_below_the_floor() -> None:
    settings = SessionMemoryPolicy(admit_top_k=2, admit_min_shared_terms=2)
    retrieved = [
        scored("first", 0.3, shared_terms=3),
        scored("second, one shared term", 0.2, shared_terms=1),
        scored("third, outside the top 2", 0.1, shared_terms=4),
    ]
    turn = merge_turn([], retrieved, settings, now=1.0)
    assert [item.content for item in turn.session_items] == ["first"]
    off = settings.model_copy(update={"admit_top_k": 0})
    assert merge_turn([], retrieved, off, now=1.0).session_items == []


def test_capacity_evicts_the_oldest_admitted_first() -> None:
    cached = merge_turn([], [scored("a", 0.9), scored("b", 0.8)], SETTINGS, 1.0).session_items
    turn = merge_turn(cached, [scored("c", 0.75), scored("d", 0.71)], SETTINGS, 2.0)
    assert [item.content for item in turn.session_items] == ["b", "c", "d"]


def test_duplicates_by_normalised_text_keep_the_higher_score() -> None:
    cached = merge_turn([], [scored("Rex is a dog", 0.8, "m1")], SETTINGS, 1.0).session_items
    turn = merge_turn(cached, [scored("  rex IS a   dog", 0.95, "m2")], SETTINGS, 2.0)
    assert len(turn.to_inject) == 1
    assert turn.to_inject[0].score == 0.95
    assert turn.to_inject[0].origin is Origin.THIS_TURN
    # Same FIFO slot, higher score.
    assert [(item.memory_id, item.score) for item in turn.session_items] == [("m2", 0.95)]
    lower = merge_turn(turn.session_items, [scored("rex is a dog", 0.5, "m3")], SETTINGS, 3.0)
    assert lower.to_inject[0].score == 0.95
    assert lower.to_inject[0].origin is Origin.SESSION
    assert not lower.changed


def test_injects_the_top_n_by_score_with_their_origin() -> None:
    cached = merge_turn([], [scored("old", 0.9)], SETTINGS, 1.0).session_items
    turn = merge_turn(cached, [scored("new", 0.8), scored("weak", 0.4)], SETTINGS, 2.0)
    assert [(c.content, c.origin) for c in turn.to_inject] == [
        ("old", Origin.SESSION),
        ("new", Origin.THIS_TURN),
    ]


def test_a_turn_that_retrieves_nothing_changes_nothing() -> None:
    cached = merge_turn([], [scored("a", 0.9)], SETTINGS, 1.0).session_items
    turn = merge_turn(cached, [], SETTINGS, 2.0)
    assert not turn.changed
    assert [c.content for c in turn.to_inject] == ["a"]


async def test_a_copy_written_back_after_its_delete_is_dropped_on_the_next_turn(
    tmp_path: Path,
) -> None:
    """The race `MemoryService.delete` cannot close alone: a turn that read the session
    before the delete writes the item back after it."""
    store, sessions, database = await open_embedded_memory(tmp_path)
    service = MemoryService(store, sessions, TableEmbedder({}, [1.0, 0.0]))
    policy = Policy().memory
    for namespace in (None, "travel"):
        scope = MemoryScope("t", "u", namespace)
        (kept,) = await service.add(scope, [NewMemory("kept fact")], policy)
        (gone,) = await service.add(scope, [NewMemory("deleted fact")], policy)
        assert await service.delete("t", gone.id)
        session = f"s-{namespace}"
        stale = [
            SessionItem(dedup_key(r.content), r.content, 0.9, r.id, 0.0, 0.0) for r in (kept, gone)
        ]
        await sessions.save("t", "u", session, stale, ttl_seconds=60)
        turn = await service.session_turn(scope, session, [], policy)
        assert [c.memory_id for c in turn.to_inject] == [kept.id]
        assert [i.memory_id for i in await service.load_session(scope, session)] == [kept.id]
    await database.close()
