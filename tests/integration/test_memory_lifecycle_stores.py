"""The memory lifecycle on both store implementations (embedded SQLite, Redis on a real
server): versions that supersede atomically, the owners the clean-up walks, listing
filters, same-key supersession on write, retention, export and import."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from gateway.memory.lifecycle import MemoryLifecycle
from gateway.memory.records import MemoryRecord, MemoryScope
from gateway.memory.service import MemoryService, NewMemory
from gateway.policy.memory import MemoryPolicy
from gateway.policy.models import Policy
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.protocols import MemoryStore, SessionStore, SupersedeConflict
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.redis.memory import RedisMemoryStore
from gateway.storage.redis.sessions import RedisSessionStore
from gateway.testing.redis_server import RedisServer
from tests.unit.memory.fakes import TableEmbedder

DAY = 86400.0
NOW = 1_760_000_000.0
ALICE = MemoryScope("acme", "alice")
POLICY = MemoryPolicy()
Stores = tuple[MemoryStore, SessionStore]


@pytest.fixture(params=["embedded", "redis"])
async def stores(
    request: pytest.FixtureRequest, tmp_path: Path, prefix: str
) -> AsyncIterator[Stores]:
    if request.param == "embedded":
        store, sessions, database = await open_embedded_memory(tmp_path)
        yield store, sessions
        await database.close()
        return
    server: RedisServer = request.getfixturevalue("redis_server")
    backend = await RedisBackend.open(server.url, prefix=prefix, index_name="test-4d")
    yield RedisMemoryStore(backend), RedisSessionStore(backend)
    await backend.close()


@pytest.fixture
def service(stores: Stores) -> MemoryService:
    store, sessions = stores
    return MemoryService(store, sessions, TableEmbedder({}, [1.0, 0.0]), clock=lambda: NOW)


def record(memory_id: str, user: str = "alice", tenant: str = "acme", **kw: object) -> MemoryRecord:
    return MemoryRecord(
        id=memory_id,
        tenant=tenant,
        user=user,
        content=f"fact {memory_id}",
        created_at=float(kw.pop("created_at", 1.0)),  # type: ignore[arg-type]
        vector=np.asarray([1.0, 0.0], dtype=np.float32),
        embedder="e",
        **kw,  # type: ignore[arg-type]
    )


async def test_a_new_version_marks_the_old_one_in_the_same_write(stores: Stores) -> None:
    store, _ = stores
    await store.add([record("v1", key="user.city")])
    await store.add([record("v2", key="user.city", supersedes="v1")], supersedes={"v1": "v2"})
    old, new = await store.get("acme", "v1"), await store.get("acme", "v2")
    assert old is not None and old.superseded_by == "v2" and not old.current
    assert new is not None and new.supersedes == "v1" and new.current
    version = await store.scope_version("acme", "alice")

    # A second new version of v1 conflicts, and nothing of it is stored.
    with pytest.raises(SupersedeConflict) as conflict:
        await store.add([record("v3")], supersedes={"v1": "v3"})
    assert conflict.value.superseded_by == "v2"
    assert await store.get("acme", "v3") is None
    assert await store.usage("acme", "alice") == (2, 2 * len("fact v1"))
    assert await store.scope_version("acme", "alice") == version
    # Gone, or another user's: the same refusal, nothing stored.
    for old_id, user in (("nope", "alice"), ("v2", "bob")):
        with pytest.raises(SupersedeConflict) as missing:
            await store.add([record("v4", user=user)], supersedes={old_id: "v4"})
        assert missing.value.superseded_by is None
    assert await store.get("acme", "v4") is None


async def test_owners_and_list_filters(stores: Stores) -> None:
    store, _ = stores
    await store.add([record("a1", kind="episodic"), record("a2", superseded_by="a3")])
    await store.add([record("b1", user="bob"), record("x1", tenant="globex")])
    assert await store.owners() == [("acme", "alice"), ("acme", "bob"), ("globex", "alice")]
    page = await store.list_page("acme", "alice", None, None, 10, 0, lambda r: r.current)
    assert [r.id for r in page.records] == ["a1"]
    assert await store.delete("acme", "b1")
    assert ("acme", "bob") not in await store.owners()


async def test_the_same_key_supersedes_on_write_unless_told_not_to(
    service: MemoryService,
) -> None:
    (blue,) = await service.add(ALICE, [NewMemory("My favourite colour is blue.")], POLICY)
    assert blue.key == "user.favourite_colour" and blue.kind == "semantic"
    (red,) = await service.add(ALICE, [NewMemory("My favourite colour is red.")], POLICY)
    assert red.supersedes == blue.id
    stored = {r.id: r for r in await service.store.in_scope(ALICE)}
    assert stored[blue.id].superseded_by == red.id
    results = await service.search(ALICE, "favourite colour", 5, POLICY)
    assert [r.record.content for r in results] == ["My favourite colour is red."]
    assert blue.id not in (await service.scope_index(ALICE)).ids

    # An explicit key, and `supersede: false` keeping both current.
    first, second = await service.add(
        ALICE,
        [
            NewMemory("Works from Lisbon.", key="user.office"),
            NewMemory("Works from Porto on Fridays.", key="user.office", supersede=False),
        ],
        POLICY,
    )
    listed = await service.store.in_scope(ALICE)
    assert {r.id for r in listed if r.current and r.key == "user.office"} == {first.id, second.id}


async def test_retention_evicts_by_age_then_least_recently_used(service: MemoryService) -> None:
    store = service.store
    await store.add(
        [
            record("old", kind="episodic", created_at=NOW - 40 * DAY),
            record("e1", kind="episodic", created_at=NOW - 3 * DAY, last_access_at=NOW - DAY),
            record("e2", kind="episodic", created_at=NOW - 2 * DAY),
            record("e3", kind="episodic", created_at=NOW - 1 * DAY),
            record("s1", kind="semantic", created_at=NOW - 400 * DAY),
            record("b1", user="bob", kind="episodic", created_at=NOW - 40 * DAY),
        ]
    )
    policy = Policy.model_validate(
        {"memory": {"retention": {"episodic": {"max_age_days": 30, "max_count_per_user": 2}}}}
    ).memory
    lifecycle = MemoryLifecycle(service, clock=lambda: NOW)
    assert await lifecycle.cleanup(lambda tenant: policy, "acme", "alice") == 2
    # Past 30 days: `old`; of the three left, e2 is the least recently used (e1 was
    # used a day ago); semantic memories have no rule; bob was not asked for.
    assert {r.id for r in await store.in_scope(ALICE)} == {"e1", "e3", "s1"}
    assert await store.get("acme", "b1") is not None
    assert await lifecycle.cleanup(lambda tenant: MemoryPolicy()) == 0  # keeps everything
    assert await lifecycle.cleanup(lambda tenant: policy) == 1  # bob's, tenant-wide


async def test_export_delete_all_import_restores_the_same_memories(
    service: MemoryService,
) -> None:
    await service.add(
        ALICE,
        [
            NewMemory("Always answer in French.", kind="procedural"),
            NewMemory("Visited Rome.", occurred_at=NOW - 5 * DAY),
            NewMemory("Badge valid.", valid_from=NOW - DAY, valid_to=NOW + DAY),
        ],
        POLICY,
    )
    (old,) = await service.add(ALICE, [NewMemory("My city is Oslo.")], POLICY)
    await service.add(ALICE, [NewMemory("My city is Bergen.")], POLICY)
    await service.touch("acme", [old.id])
    lifecycle = MemoryLifecycle(service)
    exported = await lifecycle.export(ALICE)
    assert [r.kind for r in exported].count("procedural") == 1
    assert await lifecycle.delete_where(ALICE, lambda r: True) == 5
    assert await service.store.in_scope(ALICE) == []

    result = await lifecycle.restore(ALICE, exported, POLICY)
    assert (result.imported, result.skipped) == (5, 0)
    restored = await lifecycle.export(ALICE)
    assert [r.to_api() for r in restored] == [r.to_api() for r in exported]
    again = await lifecycle.restore(ALICE, exported, POLICY)  # idempotent
    assert (again.imported, again.skipped) == (0, 5)
    assert len(await service.store.in_scope(ALICE)) == 5
    # Every text embeds alike here: the other memories rank too, below by keyword.
    contents = [r.record.content for r in await service.search(ALICE, "which city", 5, POLICY)]
    assert contents[0] == "My city is Bergen." and "My city is Oslo." not in contents
