"""Kinds and lifecycle in ranking and injection: decay by last use and kind, facts
outside their validity left out (and found `as_of`), procedural memories first and
never ranked, the key rules, and what retention lets go."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gateway.auth import Principal
from gateway.memory.inject import PROCEDURAL_HEADER, block_lines, build_block, procedural_candidate
from gateway.memory.limits import ModelLimits
from gateway.memory.records import MemoryRecord, MemoryScope
from gateway.memory.retention import retention_victims
from gateway.memory.service import MemoryService, NewMemory
from gateway.memory.session import MemoryCandidate, Origin
from gateway.memory.tokens import Tokenizers
from gateway.memory.versions import infer_kind, rule_key
from gateway.pipeline.memory import MemoryStage
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.values import Timings
from gateway.policy.memory import MemoryPolicy
from gateway.policy.memory_lifecycle import MemoryRetentionPolicy
from gateway.policy.models import Policy
from gateway.policy.working_memory import WorkingMemoryPolicy
from gateway.storage.embedded.memory import open_embedded_memory
from tests.unit.memory.fakes import TableEmbedder

DAY = 86400.0
NOW = 1_760_000_000.0
POLICY = MemoryPolicy()
ALICE = MemoryScope("acme", "alice")


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[MemoryService]:
    store, sessions, database = await open_embedded_memory(tmp_path)
    yield MemoryService(store, sessions, TableEmbedder({}, [1.0, 0.0]), clock=lambda: NOW)
    await database.close()


async def test_a_recently_used_memory_outranks_an_unused_one_of_the_same_age(
    service: MemoryService,
) -> None:
    unused, used = await service.add(
        ALICE,
        [
            NewMemory("The locker code is 1701.", created_at=NOW - 400 * DAY),
            NewMemory("The locker code is 1702.", created_at=NOW - 400 * DAY),
        ],
        POLICY,
    )
    await service.store.touch("acme", [used.id], at=NOW - DAY)
    results = await service.search(ALICE, "locker code", 2, POLICY)
    assert [r.record.id for r in results] == [used.id, unused.id]


async def test_events_fade_faster_than_stable_facts(service: MemoryService) -> None:
    await service.add(
        ALICE,
        [
            NewMemory("Parking spot B7 booked.", kind="episodic", created_at=NOW - 90 * DAY),
            NewMemory("Parking spot B7 is mine.", kind="semantic", created_at=NOW - 90 * DAY),
        ],
        POLICY,
    )
    results = await service.search(ALICE, "parking spot b7", 2, POLICY)
    assert [r.record.kind for r in results] == ["semantic", "episodic"]
    # With equal half-lives the two tie again (the episodic one was written first).
    same = Policy.model_validate(
        {"memory": {"ranking": {"kind_half_life_days": {"semantic": None}}}}
    ).memory
    assert (await service.search(ALICE, "parking spot b7", 2, same))[0].record.kind == "episodic"


async def test_a_fact_outside_its_validity_is_left_out_but_found_as_of(
    service: MemoryService,
) -> None:
    (expired,) = await service.add(
        ALICE,
        [NewMemory("The office door code is 4242.", valid_from=NOW - 9 * DAY, valid_to=NOW - DAY)],
        POLICY,
    )
    assert expired.kind == "temporal"
    assert await service.search(ALICE, "office door code", 5, POLICY) == []
    then = await service.search(ALICE, "office door code", 5, POLICY, now=NOW - 2 * DAY)
    assert [r.record.id for r in then] == [expired.id]
    # Not yet valid is left out too; a stale factor above 0 ranks them lower instead.
    assert await service.search(ALICE, "office door code", 5, POLICY, now=NOW - 10 * DAY) == []
    lenient = Policy.model_validate({"memory": {"ranking": {"stale_factor": 0.6}}}).memory
    assert len(await service.search(ALICE, "office door code", 5, lenient)) == 1


async def test_procedural_memories_are_not_ranked_but_kept_in_order(
    service: MemoryService,
) -> None:
    first, second = await service.add(
        ALICE,
        [
            NewMemory("Always answer in French.", kind="procedural", created_at=NOW - 2 * DAY),
            NewMemory("Never mention competitors.", kind="procedural", created_at=NOW - DAY),
        ],
        POLICY,
    )
    assert await service.search(ALICE, "answer in French", 5, POLICY) == []
    index = await service.scope_index(ALICE)
    assert [r.id for r in index.procedural] == [first.id, second.id]


def test_pinned_lines_come_first_within_their_own_budget() -> None:
    counter = Tokenizers().for_model("gpt-4o-mini")
    rules = [
        procedural_candidate(
            MemoryRecord(id=f"p{i}", tenant="t", user="u", content=text, created_at=NOW)
        )
        for i, text in enumerate(["Always answer in French.", "Keep answers short. " * 40])
    ]
    ranked = [
        MemoryCandidate(f"k{i}", f"Ranked fact {i}.", 0.9 - i / 10, Origin.THIS_TURN, f"m{i}", NOW)
        for i in range(3)
    ]
    block = build_block(ranked, counter, 400, rules, pinned_budget_tokens=40)
    assert block.message is not None
    lines = block_lines(block.message["content"])
    # The long rule does not fit the 40-token procedural budget; the short one leads.
    assert lines[0].startswith("- [memory, standing instruction, ") and "French" in lines[0]
    assert [c.memory_id for c in block.included] == ["p0", "m0", "m1", "m2"]


@pytest.mark.parametrize("budgeted", [False, True], ids=["plain", "working_memory_budget"])
async def test_the_stage_injects_procedural_memories_for_an_unrelated_question(
    tmp_path: Path, budgeted: bool
) -> None:
    store, sessions, database = await open_embedded_memory(tmp_path)
    service = MemoryService(store, sessions, TableEmbedder({}, [1.0, 0.0]))
    policy = Policy(working_memory=WorkingMemoryPolicy(enabled=budgeted))
    await service.add(
        MemoryScope("t", "u"),
        [
            NewMemory("Always answer in French.", kind="procedural"),
            NewMemory("The invoice total was 12 euros."),
        ],
        policy.memory,
    )
    stage = MemoryStage(service, Tokenizers(), ModelLimits({"m": "gpt-4o-mini"}, {}))
    body: dict[str, object] = {
        "model": "m",
        "messages": [{"role": "user", "content": "How tall is Mont Blanc?"}],
    }
    request = ChatRequest(uuid.uuid4().hex, Principal("t"), "m", body, policy, user="u")
    injection = await stage.run(request, Timings())
    await database.close()
    assert injection.body is not None and injection.items >= 1
    block = injection.body["messages"][0]["content"]
    assert block_lines(block)[0].endswith("Always answer in French.")
    # The block tells the model to apply the user's standing rules, and only those.
    assert block.startswith(PROCEDURAL_HEADER) and "standing instruction" in block


@pytest.mark.parametrize(
    ("content", "key"),
    [
        ("My favourite colour is blue.", "user.favourite_colour"),
        ("my preferred language is Dutch", "user.preferred_language"),
        ("I now live in Lisbon.", "user.home_location"),
        ("I work for Acme Corp", "user.employer"),
        ("Call me Sam.", "user.name"),
        ("I prefer tea.", None),
        ("My car is red. My bike is blue.", None),  # two facts: no one key
        ("We met in Paris.", None),
    ],
)
def test_rule_keys(content: str, key: str | None) -> None:
    assert rule_key(content) == key


def test_kinds_are_inferred_from_the_fields_given() -> None:
    assert infer_kind(None, None, None, None) == "semantic"
    assert infer_kind(None, 1.0, None, None) == "temporal"
    assert infer_kind(None, None, None, 1.0) == "episodic"
    assert infer_kind("procedural", 1.0, None, None) == "procedural"


def test_retention_takes_superseded_versions_before_current_ones() -> None:
    def make(memory_id: str, **kw: object) -> MemoryRecord:
        return MemoryRecord(
            id=memory_id, tenant="t", user="u", content=memory_id, created_at=NOW - DAY, **kw
        )  # type: ignore[arg-type]

    records = [
        make("current-unused"),
        make("superseded-used", superseded_by="x", last_access_at=NOW),
        make("current-used", last_access_at=NOW),
    ]
    retention = MemoryRetentionPolicy.model_validate({"semantic": {"max_count_per_user": 1}})
    assert retention_victims(records, retention, NOW) == ["superseded-used", "current-unused"]
    assert retention_victims(records, MemoryRetentionPolicy(), NOW) == []
