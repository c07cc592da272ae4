"""Rule-based capture keeps first-person statements and decisions, nothing else."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from gateway.auth import Principal
from gateway.memory.capture import extract_statements
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I prefer window seats.", ["I prefer window seats."]),
        ("Thanks! My manager's name is Priya. Can you help?", ["My manager's name is Priya."]),
        ("We decided to ship on Friday. What next?", ["We decided to ship on Friday."]),
        ("Let's go with the blue design", ["Let's go with the blue design"]),
        ("我喜欢喝绿茶。今天天气怎么样？", ["我喜欢喝绿茶。"]),
        ("我的邮箱是工作邮箱。", ["我的邮箱是工作邮箱。"]),
        ("好的，我们决定用方案B。", ["好的，我们决定用方案B。"]),
    ],
)
def test_statements_are_captured(text: str, expected: list[str]) -> None:
    assert extract_statements(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "What is the capital of France?",
        "Do I prefer tea or coffee?",
        "Explain how transformers work.",
        "Summarise this article for me.",
        "今天天气怎么样？",
        "ok",
    ],
)
def test_questions_and_requests_are_not(text: str) -> None:
    assert extract_statements(text) == []


async def test_capture_stops_at_the_users_cap_and_the_turn_goes_on(tmp_path: Path) -> None:
    store, sessions, database = await open_embedded_memory(tmp_path)
    service = MemoryService(store, sessions, TableEmbedder({}, [1.0, 0.0]))
    policy = Policy.model_validate(
        {"memory": {"capture": {"enabled": True}, "limits": {"max_memories_per_user": 1}}}
    )
    await service.add(MemoryScope("t", "u"), [NewMemory("I live in Lyon.")], policy.memory)
    stage = MemoryStage(service, Tokenizers(), ModelLimits({}, {}))
    body = {"model": "m", "messages": [{"role": "user", "content": "My favourite airline is KLM."}]}
    request = ChatRequest(uuid.uuid4().hex, Principal("t"), "m", body, policy, user="u")
    injection = await stage.run(request, Timings())
    assert injection.note == "memory_limit_reached"
    assert [r.content for r in await store.in_scope(MemoryScope("t", "u"))] == ["I live in Lyon."]
    await database.close()
