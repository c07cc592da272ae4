"""Deployment errors fail loudly; outages fail open, fast, and heal by themselves."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import numpy as np
import pytest
import redis
from redis.asyncio import Redis

from gateway.storage.index_name import index_name_for
from gateway.storage.protocols import CachedCompletion, SemanticEntry, StoreUnavailable
from gateway.storage.redis.backend import RedisBackend
from gateway.storage.redis.connection import RedisConnection, RedisSearchMissing
from gateway.storage.redis.exact import RedisExactCache
from gateway.storage.redis.lock import RedisLock
from gateway.storage.redis.vectors import RedisVectorIndex
from gateway.testing.redis_server import RedisServer, redis_binaries
from gateway.testing.threaded_server import free_port

T = TypeVar("T")
INDEX = index_name_for("outage-model", 4)
ENTRY = CachedCompletion(completion={"x": 1}, tenant="acme", model="m", created_at=1.0)


def _semantic_entry(entry_id: str) -> SemanticEntry:
    now = time.time()
    return SemanticEntry(entry_id, "acme", "m", "fp", "q", {"a": 1}, now, now + 60)


@pytest.fixture
def plain_redis_url() -> Iterator[str]:
    """A Redis without the search module (as `redis:7` or a managed Redis without it)."""
    port = free_port()
    process = subprocess.Popen(
        [
            str(redis_binaries()[0]),
            *("--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if redis.Redis(port=port, socket_timeout=0.5).ping():
                    break
            except redis.RedisError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait(timeout=10)


async def test_missing_search_module_is_a_clear_error(plain_redis_url: str) -> None:
    connection = RedisConnection(plain_redis_url)
    try:
        with pytest.raises(RedisSearchMissing, match="needs Redis Stack, Redis 8"):
            await connection.check_search_module()
        # The server answered: this is not an outage.
        assert connection.state()["available"] is True
    finally:
        await connection.close()
    with pytest.raises(RedisSearchMissing, match="RediSearch module"):
        await RedisBackend.open(plain_redis_url, index_name=INDEX)


async def _eventually(operation: Callable[[], Awaitable[T]], within: float = 15.0) -> T:
    deadline = time.monotonic() + within
    while True:
        try:
            return await operation()
        except StoreUnavailable:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_outage_fails_open_fast_and_heals(prefix: str) -> None:
    server = RedisServer().start()  # its own server: this test stops it
    connection = RedisConnection(server.url)
    try:
        exact = RedisExactCache(connection, prefix=prefix)
        vectors = await RedisVectorIndex.open(connection, INDEX, 4, prefix=prefix)
        lock = RedisLock(connection, prefix=prefix)
        await exact.put("k", ENTRY, ttl_seconds=60)
        assert await exact.get("k") == ENTRY

        server.stop()
        started = time.perf_counter()
        with pytest.raises(StoreUnavailable):
            await exact.get("k")
        assert time.perf_counter() - started < 5.0  # connection refused: at once; a hang never ends
        state = connection.state()
        assert state["available"] is False
        assert state["failures_total"] >= 1
        assert state["last_error"] == "ConnectionError"

        # The circuit is open: everything fails at once, without touching the socket
        # (a call that tried the socket would count one more failure).
        failures_before = connection.failures_total
        for operation in (
            lambda: exact.get("k"),
            lambda: exact.put("k", ENTRY, 60),
            lambda: vectors.search("fp", np.ones(4), 3),
            lambda: vectors.add(_semantic_entry("a"), np.ones(4)),
            lambda: lock.acquire("l", 5),
        ):
            with pytest.raises(StoreUnavailable, match="next attempt in"):
                await operation()
        assert connection.failures_total == failures_before
        assert await connection.ping() is False

        server.start()  # same port, empty (no persistence)
        assert await _eventually(lambda: exact.get("k")) is None
        assert connection.state()["available"] is True
        await exact.put("k", ENTRY, ttl_seconds=60)
        assert await exact.get("k") == ENTRY
        # The index went with the restart; it is re-created on the way.
        await vectors.add(_semantic_entry("b"), np.ones(4))
        hits = await vectors.search("fp", np.ones(4), 3)
        assert [entry.entry_id for entry, _ in hits] == ["b"]
        assert await lock.acquire("l", 5) is not None
    finally:
        await connection.close()
        server.stop()


async def test_backend_opens_while_redis_is_down(prefix: str) -> None:
    server = RedisServer()  # not started yet
    backend = await RedisBackend.open(server.url, prefix=prefix, index_name=INDEX)
    try:
        assert backend.state()["available"] is False
        with pytest.raises(StoreUnavailable):
            await backend.semantic.search("fp", np.ones(4), 3)
        server.start()
        await _eventually(lambda: backend.semantic.add(_semantic_entry("late"), np.ones(4)))
        hits = await backend.semantic.search("fp", np.ones(4), 3)
        assert [entry.entry_id for entry, _ in hits] == ["late"]
    finally:
        await backend.close()
        server.stop()


async def test_back_off_doubles_and_logs_without_the_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    port = free_port()  # nothing listens there
    connection = RedisConnection(f"redis://user:s3cret-pw@127.0.0.1:{port}/0", clock=lambda: now[0])
    caplog.set_level(logging.INFO, logger="gateway.storage.redis.connection")
    try:
        with pytest.raises(StoreUnavailable):
            await connection.run(lambda client: client.ping())
        with pytest.raises(StoreUnavailable, match="next attempt"):
            await connection.run(lambda client: client.ping())
        now[0] += 0.5  # first back-off over: one probe, which fails: back-off doubles
        with pytest.raises(StoreUnavailable):
            await connection.run(lambda client: client.ping())
        now[0] += 0.9
        with pytest.raises(StoreUnavailable, match="next attempt"):
            await connection.run(lambda client: client.ping())
        now[0] += 0.2  # 1 s back-off over: the second probe fails too, back-off is 2 s
        with pytest.raises(StoreUnavailable):
            await connection.run(lambda client: client.ping())
        now[0] += 1.9
        with pytest.raises(StoreUnavailable, match="next attempt"):
            await connection.run(lambda client: client.ping())
        # Only real attempts count: the three that reached for the socket.
        assert connection.failures_total == 3
        assert connection.state()["last_error"] == "ConnectionError"
    finally:
        await connection.close()
    logged = caplog.text
    assert f"127.0.0.1:{port}" in logged
    assert "s3cret-pw" not in logged


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda c: c.run(lambda client: client.get("k")), id="redis-py"),
        pytest.param(lambda c: c.call("GET", "k"), id="pipelined"),
    ],
)
async def test_a_server_that_never_answers_times_out_fast(
    read: Callable[[RedisConnection], Awaitable[object]],
) -> None:
    """A hung server (not a refused connection): bounded by the socket timeouts, through
    redis-py and through the hot path's pipelined socket alike."""

    async def accept_and_ignore(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(-1)  # until the client gives up
        writer.close()

    hung = await asyncio.start_server(accept_and_ignore, "127.0.0.1", 0)
    port = hung.sockets[0].getsockname()[1]
    connection = RedisConnection(f"redis://127.0.0.1:{port}/0")
    try:
        started = time.perf_counter()
        with pytest.raises(StoreUnavailable):
            await read(connection)
        assert time.perf_counter() - started < 5.0  # the 0.25 s timeout; a hang never ends
        assert connection.state()["last_error"] == "TimeoutError"
    finally:
        await connection.close()
        hung.close()
        await hung.wait_closed()


async def test_back_off_is_capped() -> None:
    now = [0.0]
    connection = RedisConnection(
        f"redis://127.0.0.1:{free_port()}/0",
        backoff_initial_seconds=0.5,
        backoff_max_seconds=10.0,
        clock=lambda: now[0],
    )
    try:
        waits = []
        for _ in range(8):
            with pytest.raises(StoreUnavailable):
                await connection.run(lambda client: client.ping())  # a probe: it fails
            with pytest.raises(StoreUnavailable, match=r"next attempt in (\d+\.\d) s") as info:
                await connection.run(lambda client: client.ping())
            waits.append(float(str(info.value).rsplit(" in ", 1)[1].split()[0]))
            now[0] += waits[-1]
        assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0]
    finally:
        await connection.close()


async def test_saturated_pool_sheds_load_without_tripping(redis_server: RedisServer) -> None:
    connection = RedisConnection(redis_server.url, max_connections=1, connect_timeout_seconds=0.1)
    slot_taken = asyncio.Event()
    release = asyncio.Event()

    async def held_ping(client: Redis) -> bool:
        slot_taken.set()
        await release.wait()  # holds the only slot until the test lets go
        return bool(await client.ping())

    try:
        holder = asyncio.create_task(connection.run(held_ping))
        await slot_taken.wait()
        # The second request gives up after its bounded wait while the slot is still
        # held (no wall-clock bound here: a loaded machine stretches the 0.1 s wait).
        with pytest.raises(StoreUnavailable, match="busy"):
            await connection.run(lambda client: client.ping())
        assert not holder.done()
        release.set()
        assert await holder is True
        assert connection.state()["available"] is True  # not an outage
        assert await connection.run(lambda client: client.ping())
    finally:
        release.set()
        await connection.close()
