"""Both knowledge store implementations against the same expectations: the embedded
SQLite store and the Redis store on a real server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from gateway.knowledge.records import KnowledgeRecord, KnowledgeScope
from gateway.storage.agent_protocols import KnowledgeStore
from gateway.storage.embedded.knowledge import SQLiteKnowledgeStore
from gateway.storage.protocols import QuotaExceeded
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.redis.knowledge import RedisKnowledgeStore
from gateway.testing.redis_server import RedisServer


@pytest.fixture(params=["embedded", "redis"])
async def store(
    request: pytest.FixtureRequest, tmp_path: Path, prefix: str
) -> AsyncIterator[KnowledgeStore]:
    if request.param == "embedded":
        embedded = await SQLiteKnowledgeStore.open(tmp_path)
        yield embedded
        await embedded.close()
        return
    server: RedisServer = request.getfixturevalue("redis_server")
    backend = await RedisBackend.open(server.url, prefix=prefix, index_name="test-4d")
    yield RedisKnowledgeStore(backend)
    await backend.close()


def item(
    item_id: str,
    document: str = "d1",
    chunk: int = 0,
    namespace: str = "",
    tenant: str = "acme",
    created_at: float = 1.0,
) -> KnowledgeRecord:
    return KnowledgeRecord(
        id=item_id,
        tenant=tenant,
        content=f"fact {item_id}",
        created_at=created_at,
        document_id=document,
        chunk=chunk,
        namespace=namespace,
        title="Handbook",
        source="wiki",
        metadata={"page": 3},
        vector=np.asarray([0.0, 1.0, 0.0, 0.0], dtype=np.float32),
        embedder="e",
    )


async def test_round_trip_keeps_every_field(store: KnowledgeStore) -> None:
    original = item("k1", namespace="sales")
    await store.add([original], max_items=10)
    loaded = await store.get("acme", "k1")
    assert loaded == original
    assert loaded is not None and loaded.vector is not None
    assert loaded.vector.tolist() == [0.0, 1.0, 0.0, 0.0] and loaded.embedder == "e"
    assert await store.get("globex", "k1") is None


async def test_scopes_see_the_tenant_wide_items_and_their_own_namespace(
    store: KnowledgeStore,
) -> None:
    await store.add([item("wide"), item("s", "d2", namespace="sales")], max_items=10)
    await store.add([item("o", "d3", tenant="globex")], max_items=10)
    await store.add([item("h", "d4", namespace="hr")], max_items=10)

    def ids(records: list[KnowledgeRecord]) -> set[str]:
        return {record.id for record in records}

    assert ids(await store.in_scope(KnowledgeScope("acme"))) == {"wide"}
    assert ids(await store.in_scope(KnowledgeScope("acme", "sales"))) == {"wide", "s"}
    assert ids(await store.in_scope(KnowledgeScope("acme", "hr"))) == {"wide", "h"}
    assert ids(await store.in_scope(KnowledgeScope("globex", "sales"))) == {"o"}


async def test_every_change_moves_the_version(store: KnowledgeStore) -> None:
    seen = [await store.version("acme")]
    await store.add([item("a", "d1", 0), item("b", "d1", 1), item("c", "d2")], max_items=10)
    seen.append(await store.version("acme"))
    assert await store.delete("acme", "c") is True
    seen.append(await store.version("acme"))
    assert await store.delete("acme", "c") is False
    assert sorted(await store.delete_document("acme", "d1")) == ["a", "b"]
    seen.append(await store.version("acme"))
    assert len(set(seen)) == 4
    assert await store.count("acme") == 0
    assert await store.in_scope(KnowledgeScope("acme")) == []
    assert await store.delete_document("acme", "d1") == []


async def test_a_version_read_alongside_a_write_is_not_kept_past_it(
    store: KnowledgeStore,
) -> None:
    # The embedded store remembers versions (it is the database's only writer): a read
    # that overlapped a write may have seen the old one and must not be remembered.
    before, _ = await asyncio.gather(store.version("acme"), store.add([item("a")], max_items=5))
    after = await store.version("acme")
    assert await store.version("acme") == after
    await store.delete("acme", "a")
    assert await store.version("acme") not in (before, after)
    assert before != after


async def test_replacing_a_document_swaps_its_items_in_one_step(store: KnowledgeStore) -> None:
    await store.add([item("old1", "doc"), item("old2", "doc", 1), item("x", "other")], max_items=3)
    # At the cap (3 items), a replacement of two by two still fits: the old ones go.
    await store.add([item("new1", "doc"), item("new2", "doc", 1)], max_items=3, replaces="doc")
    scope = {record.id for record in await store.in_scope(KnowledgeScope("acme"))}
    assert scope == {"new1", "new2", "x"}
    assert await store.get("acme", "old1") is None
    page = await store.list_page("acme", None, "doc", 10, 0)
    assert [record.id for record in page.records] == ["new1", "new2"]


async def test_the_tenant_cap_refuses_the_whole_write(store: KnowledgeStore) -> None:
    await store.add([item("a"), item("b")], max_items=3)
    with pytest.raises(QuotaExceeded) as refused:
        await store.add([item("c"), item("d")], max_items=3)
    assert (refused.value.scope, refused.value.used, refused.value.cap) == ("tenant", 2, 3)
    assert await store.count("acme") == 2
    await store.add([item("c")], max_items=3, replaces=None)
    # A replace that would still end above the cap changes nothing either.
    with pytest.raises(QuotaExceeded):
        await store.add([item("e", "d9"), item("f", "d9")], max_items=3, replaces="d9")
    assert await store.count("acme") == 3


async def test_list_is_newest_first_filters_and_paginates(store: KnowledgeStore) -> None:
    await store.add([item("a", "d1", created_at=1.0)], max_items=10)
    await store.add([item("b", "d2", namespace="sales", created_at=2.0)], max_items=10)
    await store.add([item("c", "d3", created_at=3.0)], max_items=10)
    first = await store.list_page("acme", None, None, 2, 0)
    assert [r.id for r in first.records] == ["c", "b"] and first.has_more
    rest = await store.list_page("acme", None, None, 2, 2)
    assert [r.id for r in rest.records] == ["a"] and not rest.has_more
    sales = await store.list_page("acme", "sales", None, 10, 0)
    assert [r.id for r in sales.records] == ["b"]
    assert (await store.list_page("globex", None, None, 10, 0)).records == []
