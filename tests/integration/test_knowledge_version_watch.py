"""Knowledge versions answered from memory on Redis (`storage/redis/version_watch.py`),
against a real server: two replicas on one prefix, writes that publish and one that does
not, a dropped subscription, a user with a password, and the setting that turns it off."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import numpy as np
import pytest

from gateway.knowledge.records import KnowledgeRecord
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.knowledge import RedisKnowledgeStore
from gateway.storage.redis.version_watch import VersionWatch
from gateway.testing.redis_server import RedisServer

Opener = Callable[..., Awaitable[RedisKnowledgeStore]]


@pytest.fixture
async def replica(redis_server: RedisServer, prefix: str) -> AsyncIterator[Opener]:
    """Opens a replica's knowledge store on the shared server and prefix."""
    backends: list[RedisBackend] = []

    async def open_replica(
        memory_seconds: float = 60.0, url: str | None = None
    ) -> RedisKnowledgeStore:
        backend = await RedisBackend.open(
            url or redis_server.url,
            prefix=prefix,
            index_name="test-4d",
            knowledge_version_memory_seconds=memory_seconds,
        )
        backends.append(backend)
        return RedisKnowledgeStore(backend)

    yield open_replica
    for backend in backends:
        await backend.close()


def _item(item_id: str, tenant: str = "acme") -> KnowledgeRecord:
    return KnowledgeRecord(
        id=item_id,
        tenant=tenant,
        content=f"fact {item_id}",
        created_at=1.0,
        document_id=f"doc-{item_id}",
        chunk=0,
        namespace="",
        title="Handbook",
        source="wiki",
        metadata={},
        vector=np.asarray([0.0, 1.0, 0.0, 0.0], dtype=np.float32),
        embedder="e",
    )


def _watch(store: RedisKnowledgeStore) -> VersionWatch:
    return store._versions


async def _subscribed(store: RedisKnowledgeStore, tenant: str = "acme") -> None:
    """Reads until the watch is subscribed (the first read starts it)."""
    deadline = time.monotonic() + 5.0
    while not _watch(store).subscribed:
        assert time.monotonic() < deadline, "the version watch never subscribed"
        await store.version(tenant)
        await asyncio.sleep(0.01)


async def _gets(connection: RedisConnection) -> int:
    stats = await connection.run(lambda client: client.info("commandstats"))
    return int(stats.get("cmdstat_get", {}).get("calls", 0))


async def _until(read: Callable[[], Awaitable[str]], differs_from: str, seconds: float) -> float:
    """Seconds until `read()` returns something else than `differs_from`."""
    started = time.monotonic()
    while await read() == differs_from:
        assert time.monotonic() - started < seconds, "the change was never seen"
        await asyncio.sleep(0.002)
    return time.monotonic() - started


async def test_a_replica_reads_a_version_once_then_hears_of_another_replicas_write(
    replica: Opener,
) -> None:
    writer, reader = await replica(), await replica()
    await _subscribed(reader)
    before = await reader.version("acme")
    connection = reader._connection
    gets_before = await _gets(connection)
    for _ in range(200):
        assert await reader.version("acme") == before
    # The INFO call itself is no GET; at most the one read that remembered it.
    assert await _gets(connection) - gets_before <= 1

    await writer.add([_item("a")], max_items=10)
    # Remembered for 60 s, but the write's message arrives long before that.
    assert await _until(lambda: reader.version("acme"), before, seconds=2.0) < 2.0
    assert await reader.version("acme") == await writer.version("acme")


async def test_the_writing_replica_sees_its_own_change_at_once(replica: Opener) -> None:
    store = await replica()
    await _subscribed(store)
    seen = [await store.version("acme")]
    await store.add([_item("a")], max_items=10)
    seen.append(await store.version("acme"))  # no wait: forgotten when the write returned
    assert await store.delete("acme", "a") is True
    seen.append(await store.version("acme"))
    assert len(set(seen)) == 3


async def test_a_dropped_subscription_sends_reads_to_redis_until_it_is_back(
    replica: Opener, redis_server: RedisServer, prefix: str
) -> None:
    reader = await replica()
    await _subscribed(reader)
    before = await reader.version("acme")
    admin = RedisConnection(redis_server.url)
    try:
        await admin.run(lambda client: client.client_kill_filter(_type="pubsub"))
        deadline = time.monotonic() + 2.0
        while _watch(reader).subscribed:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.005)
        # A write that publishes nothing while nothing listens: seen all the same.
        await admin.call("INCR", f"{prefix}:knowledge-version:acme")
        assert await reader.version("acme") != before
    finally:
        await admin.close()
    await _subscribed(reader)  # back by itself, and remembering again
    gets_before = await _gets(reader._connection)
    for _ in range(50):
        await reader.version("acme")
    assert await _gets(reader._connection) - gets_before <= 1


async def test_a_writer_that_does_not_publish_is_seen_within_the_memory_bound(
    replica: Opener, redis_server: RedisServer, prefix: str
) -> None:
    reader = await replica(memory_seconds=0.3)
    await _subscribed(reader)
    before = await reader.version("acme")
    admin = RedisConnection(redis_server.url)
    try:
        # An older gateway bumps the version without the message.
        await admin.call("INCR", f"{prefix}:knowledge-version:acme")
    finally:
        await admin.close()
    assert await reader.version("acme") == before  # remembered: the bound applies
    waited = await _until(lambda: reader.version("acme"), before, seconds=2.0)
    assert waited <= 0.5


async def test_zero_seconds_reads_every_version_from_redis(replica: Opener) -> None:
    store = await replica(memory_seconds=0.0)
    gets_before = await _gets(store._connection)
    for _ in range(20):
        await store.version("acme")
    assert await _gets(store._connection) - gets_before == 20
    assert not _watch(store).subscribed


async def test_a_user_with_a_password_subscribes(
    replica: Opener, redis_server: RedisServer, prefix: str
) -> None:
    admin = RedisConnection(redis_server.url)
    await admin.run(
        lambda client: client.acl_setuser(
            prefix, enabled=True, passwords=["+pw"], keys=["*"], channels=["*"], commands=["+@all"]
        )
    )
    try:
        url = f"redis://{prefix}:pw@127.0.0.1:{redis_server.port}/0"
        writer, reader = await replica(url=url), await replica(url=url)
        await _subscribed(reader)
        before = await reader.version("acme")
        await writer.add([_item("a")], max_items=10)
        await _until(lambda: reader.version("acme"), before, seconds=2.0)
    finally:
        await admin.run(lambda client: client.acl_deluser(prefix))
        await admin.close()


def test_a_read_that_overlapped_a_change_is_not_remembered() -> None:
    watch = VersionWatch(
        None, "p:knowledge-versions", max_age_seconds=60, connect_timeout_seconds=1
    )
    watch.subscribed = True  # as after the subscription's confirmation
    started_at = watch.generation
    watch.forget("acme")  # a message (or a write of this process) while the read was out
    watch.remember("acme", "1", started_at)
    assert watch.recall("acme") is None
    watch.remember("acme", "2", watch.generation)
    assert watch.recall("acme") == "2"


async def test_a_user_barred_from_channels_still_writes_and_reads_fresh_versions(
    replica: Opener, redis_server: RedisServer, prefix: str
) -> None:
    admin = RedisConnection(redis_server.url)
    user = f"{prefix}-nochan"
    await admin.run(
        lambda client: client.acl_setuser(
            user,
            enabled=True,
            passwords=["+pw"],
            keys=["*"],
            commands=["+@all"],
            reset_channels=True,
        )
    )
    try:
        url = f"redis://{user}:pw@127.0.0.1:{redis_server.port}/0"
        writer, reader = await replica(url=url), await replica(url=url)
        before = await reader.version("acme")
        await asyncio.sleep(0.2)  # its subscription is refused meanwhile
        assert not _watch(reader).subscribed
        await writer.add([_item("a")], max_items=10)  # the refused PUBLISH is not its error
        assert await reader.version("acme") != before  # read from Redis: fresh at once
        assert await writer.delete("acme", "a") is True
    finally:
        await admin.run(lambda client: client.acl_deluser(user))
        await admin.close()
