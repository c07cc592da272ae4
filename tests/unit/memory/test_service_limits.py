"""A write past the user's cap is refused before the guard and the embedder spend
anything on it, and names the cap."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from gateway.memory.records import MemoryScope
from gateway.memory.service import MemoryService, NewMemory
from gateway.policy.models import Policy
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.protocols import QuotaExceeded
from tests.unit.memory.fakes import TableEmbedder


async def test_a_write_past_the_cap_costs_no_embedding(tmp_path: Path) -> None:
    store, sessions, database = await open_embedded_memory(tmp_path)
    embedder = TableEmbedder({}, [1.0, 0.0])
    service = MemoryService(store, sessions, embedder)
    policy = Policy.model_validate(
        {"memory": {"limits": {"max_memories_per_user": 2, "max_bytes_per_user": 1024}}}
    ).memory
    scope = MemoryScope("t", "u")
    await service.add(scope, [NewMemory("one"), NewMemory("two")], policy)
    calls = embedder.calls
    with pytest.raises(QuotaExceeded) as count:
        await service.add(scope, [NewMemory("three")], policy)
    assert (count.value.limit, count.value.used, count.value.cap) == ("count", 2, 2)
    with pytest.raises(QuotaExceeded) as size:
        await service.add(MemoryScope("t", "v"), [NewMemory("x" * 1025)], policy)
    assert (size.value.limit, size.value.adding) == ("bytes", 1025)
    assert embedder.calls == calls
    assert len(await store.in_scope(scope)) == 2
    await database.close()


def test_limits_have_defaults_and_refuse_nonsense() -> None:
    limits = Policy().memory.limits
    assert (limits.max_memories_per_user, limits.max_bytes_per_user) == (5000, 4 * 1024 * 1024)
    assert limits.idempotency_ttl_seconds == 86_400
    for bad in ({"max_memories_per_user": 0}, {"max_bytes_per_user": 10}, {"colour": 1}):
        with pytest.raises(ValidationError):
            Policy.model_validate({"memory": {"limits": bad}})
