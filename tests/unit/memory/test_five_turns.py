"""The session knowledge cache end to end through the pipeline (real SQLite stores,
real tiktoken, a table embedder and a relevance scorer that passes the cosine through,
so that every score is known exactly; tests/e2e/test_session_knowledge.py runs the same
kind of scenario with the shipped embedder and relevance model):

turn 3 retrieves two items above 0.70 and one at 0.68; turn 4 retrieves one more;
turn 5, "选A，继续", retrieves nothing, yet is forwarded with the three admitted items,
labelled as coming from earlier in the session, and without the 0.68 one.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from gateway.auth import Principal
from gateway.memory.inject import block_lines, is_memory_block
from gateway.memory.limits import ModelLimits
from gateway.memory.records import MemoryScope
from gateway.memory.service import MemoryService, NewMemory
from gateway.memory.tokens import Tokenizers
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.memory import MemoryStage
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import ChatPipeline, CompletionOutcome
from gateway.policy.models import Policy
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.telemetry.records import DecisionRecord
from tests.unit.memory.fakes import CosineRelevance, RecordingProvider, TableEmbedder
from tests.unit.test_pipeline import MemoryCache

TURN_3 = (
    "We are planning the migration of the billing service to the new cluster next quarter; "
    "list the constraints we discussed for the database, the queue and the rollout window."
)
TURN_4 = "Which option for the queue did the platform team recommend?"
TURN_5 = "选A，继续"

KNOWLEDGE = {
    "The billing database must stay on PostgreSQL 15 until the audit closes.": [0.9, 0.436],
    "Rollouts are only allowed on Tuesday mornings.": [0.75, 0.661],
    "The office coffee machine is on the third floor.": [0.68, 0.733],
    "The platform team recommends option A: a managed Kafka queue.": [0.0, 0.6, 0.8],
}
IRRELEVANT = [0.0, 0.0, 0.0, 1.0]

# Scores equal raw cosines (`CosineRelevance`): no recency or use weighting here.
POLICY = Policy.model_validate(
    {
        "memory": {
            "ranking": {
                "dense_weight": 1.0,
                "keyword_weight": 0.0,
                "dense_floor": 0.0,
                "dense_ceiling": 1.0,
                "recency_weight": 0.0,
                "access_weight": 0.0,
                "min_score": 0.5,
            }
        }
    }
)


def _pad(vector: list[float]) -> list[float]:
    return [*vector, *[0.0] * (4 - len(vector))]


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[MemoryService]:
    table = {text: _pad(vector) for text, vector in KNOWLEDGE.items()}
    table[TURN_3] = [1.0, 0.0, 0.0, 0.0]
    table[TURN_4] = [0.0, 0.0, 1.0, 0.0]
    store, sessions, database = await open_embedded_memory(tmp_path)
    memory = MemoryService(
        store, sessions, TableEmbedder(table, IRRELEVANT), relevance_model=CosineRelevance()
    )
    await memory.add(
        MemoryScope("acme", "alice"), [NewMemory(content=text) for text in KNOWLEDGE], POLICY.memory
    )
    yield memory
    await database.close()


async def test_a_short_turn_carries_what_the_session_gathered(service: MemoryService) -> None:
    provider = RecordingProvider()
    pipeline = ChatPipeline(
        provider,
        ExactCacheStage(MemoryCache()),
        memory=MemoryStage(service, Tokenizers(), ModelLimits({}, {})),
    )
    session = uuid.uuid4().hex
    user_turns = ["Hi!", "I need help with a plan.", TURN_3, TURN_4, TURN_5]
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a planner."}]
    records: list[DecisionRecord] = []
    for turn in user_turns:
        messages = [*messages, {"role": "user", "content": turn}]
        ctx = ChatRequest(
            request_id=uuid.uuid4().hex,
            principal=Principal("acme"),
            model="gpt-4o-mini",
            body={"model": "gpt-4o-mini", "messages": messages},
            policy=POLICY,
            user="alice",
            session=session,
        )
        outcome = await pipeline.handle(ctx)
        assert isinstance(outcome, CompletionOutcome)
        # the store, as the API runs it after responding
        records.append(await outcome.after_response())
        messages = [*messages, {"role": "assistant", "content": "ok"}]

    def memory_block(body: dict[str, Any]) -> str | None:
        blocks = [m["content"] for m in body["messages"] if is_memory_block(m)]
        assert len(blocks) <= 1
        return blocks[0] if blocks else None

    bodies = provider.bodies
    assert memory_block(bodies[0]) is None and memory_block(bodies[1]) is None
    turn_3 = memory_block(bodies[2])
    assert turn_3 is not None
    # Retrieved this turn: all three (0.9, 0.75, 0.68 are above min_score 0.5).
    assert turn_3.count("- [memory, 20") == 3
    turn_4 = memory_block(bodies[3])
    assert turn_4 is not None
    assert "- [memory, 20" in turn_4 and "managed Kafka" in turn_4
    assert "coffee machine" not in turn_4  # 0.68: never admitted to the session
    assert turn_4.count("[memory, earlier in this session,") == 2

    # Turn 5 retrieves nothing by itself...
    final = memory_block(bodies[4])
    assert final is not None
    lines = block_lines(final)
    assert len(lines) == 3
    assert all(line.startswith("- [memory, earlier in this session, ") for line in lines)
    # ...best score first: 0.9, 0.8, 0.75.
    assert "PostgreSQL 15" in lines[0]
    assert "managed Kafka" in lines[1]
    assert "Tuesday mornings" in lines[2]
    assert "coffee machine" not in final
    # Placed just before the last user turn (policy memory.placement, default
    # before_last_user): the system prompt and earlier turns stay a stable prefix.
    forwarded = bodies[4]["messages"]
    assert forwarded[0] == {"role": "system", "content": "You are a planner."}
    assert forwarded[-2]["content"] == final
    assert forwarded[-1] == {"role": "user", "content": TURN_5}
    assert records[4].memory_items == 3
    assert 0 < records[4].memory_tokens <= POLICY.memory.max_memory_tokens
    # Answers written with memory are never stored in the shared cache.
    assert not any(record.stored for record in records[2:])
    assert records[0].stored


async def test_another_session_starts_empty(service: MemoryService) -> None:
    provider = RecordingProvider()
    pipeline = ChatPipeline(
        provider,
        ExactCacheStage(MemoryCache()),
        memory=MemoryStage(service, Tokenizers(), ModelLimits({}, {})),
    )
    for session, text in (("s1", TURN_3), ("s2", TURN_5)):
        ctx = ChatRequest(
            request_id=uuid.uuid4().hex,
            principal=Principal("acme"),
            model="gpt-4o-mini",
            body={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]},
            policy=POLICY,
            user="alice",
            session=session,
        )
        outcome = await pipeline.handle(ctx)
    assert outcome.decision.memory.tokens == 0
    assert all(m["role"] == "user" for m in provider.bodies[-1]["messages"])
