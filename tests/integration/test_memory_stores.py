"""Both memory store implementations against the same expectations: the embedded
SQLite store and the Redis store on a real server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from gateway.memory.records import MemoryRecord, MemoryScope
from gateway.memory.service import MemoryService, NewMemory, WriteOnce
from gateway.policy.models import Policy
from gateway.storage.embedded.memory import open_embedded_memory
from gateway.storage.protocols import (
    AlreadyWritten,
    IdempotentWrite,
    MemoryStore,
    QuotaExceeded,
    RecordedAnswer,
    SessionItem,
    SessionStore,
    StoreUnavailable,
    UserQuota,
)
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.redis.memory import RedisMemoryStore
from gateway.storage.redis.sessions import RedisSessionStore
from gateway.testing.redis_server import RedisServer
from tests.unit.memory.fakes import TableEmbedder

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


def record(
    memory_id: str, user: str = "alice", tenant: str = "acme", created_at: float = 1.0, **kw: object
) -> MemoryRecord:
    vector = np.asarray([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    return MemoryRecord(
        id=memory_id,
        tenant=tenant,
        user=user,
        content=f"fact {memory_id}",
        created_at=created_at,
        vector=vector,
        embedder="e",
        **kw,  # type: ignore[arg-type]
    )


async def test_round_trip_keeps_every_field(stores: Stores) -> None:
    store, _ = stores
    original = record(
        "m1",
        namespace="travel",
        source="crm",
        tags=("a", "b"),
        metadata={"k": [1, 2]},
        valid_from=5.0,
        valid_to=9.0,
    )
    await store.add([original])
    loaded = await store.get("acme", "m1")
    assert loaded is not None
    assert loaded.to_storage() == original.to_storage()
    assert loaded.vector is not None and np.allclose(loaded.vector, original.vector)  # type: ignore[arg-type]


async def test_scopes_never_leak(stores: Stores) -> None:
    store, _ = stores
    await store.add(
        [
            record("a1"),
            record("a2", namespace="work"),
            record("b1", user="bob"),
            record("x1", tenant="globex"),
        ]
    )
    ids = {r.id for r in await store.in_scope(MemoryScope("acme", "alice"))}
    assert ids == {"a1", "a2"}
    work = await store.in_scope(MemoryScope("acme", "alice", "work"))
    assert [r.id for r in work] == ["a2"]
    assert [r.id for r in await store.in_scope(MemoryScope("globex", "alice"))] == ["x1"]
    assert await store.get("globex", "a1") is None
    assert not await store.delete("globex", "a1")
    assert await store.get("acme", "a1") is not None


async def test_list_is_newest_first_and_paginates(stores: Stores) -> None:
    store, _ = stores
    await store.add(
        [record(f"m{i}", created_at=float(i), tags=("odd",) if i % 2 else ()) for i in range(7)]
    )
    await store.add([record("bob1", user="bob", created_at=100.0)])
    first = await store.list_page("acme", "alice", None, None, limit=3, offset=0)
    assert [r.id for r in first.records] == ["m6", "m5", "m4"] and first.has_more
    last = await store.list_page("acme", "alice", None, None, limit=3, offset=6)
    assert [r.id for r in last.records] == ["m0"] and not last.has_more
    odd = await store.list_page("acme", "alice", None, "odd", limit=10, offset=0)
    assert [r.id for r in odd.records] == ["m5", "m3", "m1"]
    tenant_wide = await store.list_page("acme", None, None, None, limit=1, offset=0)
    assert [r.id for r in tenant_wide.records] == ["bob1"]


async def test_delete_is_explicit_and_final(stores: Stores) -> None:
    store, _ = stores
    await store.add([record("m1"), record("m2")])
    assert await store.delete("acme", "m1")
    assert not await store.delete("acme", "m1")
    assert [r.id for r in await store.in_scope(MemoryScope("acme", "alice"))] == ["m2"]
    await store.touch("acme", ["m1"], at=3.0)  # a deleted memory does not come back
    assert await store.get("acme", "m1") is None


async def test_concurrent_touches_add_up(stores: Stores) -> None:
    store, _ = stores
    await store.add([record("m1")])
    await asyncio.gather(*(store.touch("acme", ["m1"], at=float(i)) for i in range(10)))
    loaded = await store.get("acme", "m1")
    assert loaded is not None and loaded.access_count == 10


async def test_sessions_are_scoped_and_expire(stores: Stores) -> None:
    _, sessions = stores
    items = [SessionItem("k1", "fact", 0.8, "m1", 1.0, 2.0)]
    await sessions.save("acme", "alice", "s1", items, ttl_seconds=1)
    assert await sessions.load("acme", "alice", "s1") == items
    assert await sessions.load("acme", "bob", "s1") == []
    assert await sessions.load("globex", "alice", "s1") == []
    await asyncio.sleep(1.2)
    assert await sessions.load("acme", "alice", "s1") == []


async def test_scope_version_moves_on_add_and_delete_only(stores: Stores) -> None:
    store, _ = stores
    versions = [await store.scope_version("acme", "alice")]
    await store.add([record("m1")])
    versions.append(await store.scope_version("acme", "alice"))
    await store.touch("acme", ["m1"], at=2.0)
    assert await store.scope_version("acme", "alice") == versions[-1]
    await store.add([record("b1", user="bob")])
    assert await store.scope_version("acme", "alice") == versions[-1]
    await store.delete("acme", "m1")
    versions.append(await store.scope_version("acme", "alice"))
    assert len(set(versions)) == 3


async def test_forget_removes_a_memory_from_every_session_of_its_user(stores: Stores) -> None:
    _, sessions = stores
    kept = SessionItem("k2", "other fact", 0.9, "m2", 1.0, 2.0)
    gone = SessionItem("k1", "deleted fact", 0.8, "m1", 1.0, 2.0)
    for session in ("s1", "s2"):
        await sessions.save("acme", "alice", session, [gone, kept], ttl_seconds=60)
    await sessions.save("acme", "bob", "s1", [gone], ttl_seconds=60)  # another user's copy
    await sessions.forget("acme", "alice", ["m1"])
    assert await sessions.load("acme", "alice", "s1") == [kept]
    assert await sessions.load("acme", "alice", "s2") == [kept]
    assert await sessions.load("acme", "bob", "s1") == [gone]


async def test_existing_tells_deleted_ids_apart(stores: Stores) -> None:
    store, _ = stores
    await store.add([record("m1"), record("m2")])
    await store.delete("acme", "m1")
    assert await store.existing("acme", ["m1", "m2", "m3"]) == {"m2"}
    assert await store.existing("globex", ["m2"]) == set()


async def test_caps_hold_under_concurrent_writes_and_deletes_give_room_back(
    stores: Stores,
) -> None:
    store, _ = stores
    quota = UserQuota(max_memories=5, max_bytes=10_000)
    outcomes = await asyncio.gather(
        *(store.add([record(f"m{i}")], quota=quota) for i in range(12)), return_exceptions=True
    )
    refused = [o for o in outcomes if isinstance(o, QuotaExceeded)]
    assert len(refused) == 7 and all(o.limit == "count" and o.cap == 5 for o in refused)
    kept = await store.in_scope(MemoryScope("acme", "alice"))
    assert len(kept) == 5
    assert await store.usage("acme", "alice") == (5, sum(len(r.content) for r in kept))
    await store.add([record("b1", user="bob")], quota=quota)  # another user's own cap

    stored = [r.id for r in await store.in_scope(MemoryScope("acme", "alice"))]
    assert await store.delete("acme", stored[0])
    await store.add([record("m-new")], quota=quota)  # room again after a delete

    with pytest.raises(QuotaExceeded) as raised:
        await store.add([record("big", user="carol")], quota=UserQuota(10, max_bytes=5))
    assert (raised.value.limit, raised.value.used, raised.value.adding) == ("bytes", 0, 8)
    assert await store.usage("acme", "carol") == (0, 0)


async def test_an_idempotent_write_is_recorded_with_the_write(stores: Stores) -> None:
    store, _ = stores
    write = IdempotentWrite("key-1", "fp-1", b'{"answer": 1}', ttl_seconds=60)
    outcomes = await asyncio.gather(
        *(store.add([record(f"m{i}")], idempotent=write) for i in range(6)),
        return_exceptions=True,
    )
    assert sum(o is None for o in outcomes) == 1  # exactly one write stored
    assert all(isinstance(o, AlreadyWritten) for o in outcomes if o is not None)
    assert len(await store.in_scope(MemoryScope("acme", "alice"))) == 1
    recorded = await store.recorded_answer("acme", "alice", "key-1")
    assert recorded == RecordedAnswer("fp-1", b'{"answer": 1}')
    # Keys are per tenant and user.
    assert await store.recorded_answer("acme", "bob", "key-1") is None
    assert await store.recorded_answer("globex", "alice", "key-1") is None
    await store.add([record("b1", user="bob")], idempotent=write)


class AnswerLostStore:
    """The real store, but the first write's answer is lost after the store applied it
    (what a client sees when Redis stalls past the timeout and then runs the command)."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner
        self.lose_next_answer = True

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    async def add(self, records: Sequence[MemoryRecord], **kwargs: Any) -> None:
        await self.inner.add(records, **kwargs)
        if self.lose_next_answer:
            self.lose_next_answer = False
            raise StoreUnavailable("timed out waiting for the reply")


async def test_a_write_whose_answer_was_lost_is_not_stored_again(stores: Stores) -> None:
    store, sessions = stores
    faulty = AnswerLostStore(store)
    service = MemoryService(faulty, sessions, TableEmbedder({}, [1.0, 0.0]))  # type: ignore[arg-type]
    scope = MemoryScope("acme", "alice")
    once = WriteOnce("retry-me", "fp", lambda records: orjson.dumps([r.id for r in records]))
    policy = Policy().memory
    with pytest.raises(StoreUnavailable):  # the client gets a 503 and retries
        await service.add(scope, [NewMemory("Prefers tea.")], policy, once=once)
    with pytest.raises(AlreadyWritten) as replay:
        await service.add(scope, [NewMemory("Prefers tea.")], policy, once=once)
    (stored,) = await store.in_scope(scope)
    assert orjson.loads(replay.value.recorded.answer) == [stored.id]


async def test_totals_of_a_store_from_before_the_caps_are_counted(stores: Stores) -> None:
    store, _ = stores
    await store.add([record("m1"), record("m2")])
    # A database or Redis written before the caps existed holds no totals.
    if isinstance(store, RedisMemoryStore):
        key = store._usage_key("acme", "alice")
        await store._connection.run(lambda client: client.delete(key))
    else:
        db = store._db  # type: ignore[attr-defined]
        await db.run(lambda: db.connection.execute("DELETE FROM memory_usage"))
    assert await store.usage("acme", "alice") == (2, 2 * len("fact m1"))
    with pytest.raises(QuotaExceeded):
        await store.add([record("m3")], quota=UserQuota(max_memories=2, max_bytes=10_000))
    await store.add([record("m3")], quota=UserQuota(max_memories=3, max_bytes=10_000))
    assert await store.usage("acme", "alice") == (3, 3 * len("fact m1"))


async def test_a_session_write_behind_the_reply_is_read_by_the_next_turn(
    stores: Stores,
) -> None:
    """A turn returns before its session write is done; the next read of the session
    still sees it, on both stores (on a fresh Redis the save script's first use is
    sent twice: NOSCRIPT, then EVAL, after the read was sent)."""
    store, sessions = stores
    service = MemoryService(store, sessions, TableEmbedder({}, [1.0, 0.0, 0.0, 0.0]))
    policy = Policy().memory
    scope = MemoryScope("acme", "alice")
    for turn in range(5):
        await service.add(
            scope, [NewMemory(f"The kettle number {turn} is in hall {turn}.")], policy
        )
        retrieved = await service.search(scope, f"kettle number {turn}", 3, policy)
        merged = await service.session_turn(scope, "s1", retrieved, policy)
        loaded = await service.load_session(scope, "s1")
        assert [item.content for item in loaded] == [i.content for i in merged.session_items]
        assert loaded
    await service.close()
    assert (service.session_writes.pending, service.session_writes.failed) == (0, 0)
