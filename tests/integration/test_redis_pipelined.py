"""The hot path's pipelined socket (`storage/redis/pipelined.py`) against a real Redis:
replies matched in order under concurrency and cancellation, error replies, scripts the
server forgot, authentication and database selection, a stalled server and a restart."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.exceptions

from gateway.storage.protocols import StoreUnavailable
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.lua_script import LuaScript
from gateway.storage.redis.pipelined import Endpoint, PipelinedRedis
from gateway.testing.redis_server import RedisServer


def _pipelined(url: str, timeout_seconds: float = 0.25) -> PipelinedRedis:
    endpoint = Endpoint.from_url(url)
    assert endpoint is not None
    return PipelinedRedis(
        endpoint, operation_timeout_seconds=timeout_seconds, connect_timeout_seconds=0.5
    )


def test_urls_only_redis_py_speaks_are_left_to_it() -> None:
    assert Endpoint.from_url("redis://u:p%40ss@h:7000/3") == Endpoint(
        host="h", port=7000, username="u", password="p@ss", db=3
    )
    assert Endpoint.from_url("redis://:pw@h") == Endpoint(host="h", password="pw")
    assert Endpoint.from_url("unix:///run/redis.sock") == Endpoint(socket_path="/run/redis.sock")
    for url in ("rediss://h:6380/0", "redis://h/0?ssl_cert_reqs=none", "redis://h/x"):
        assert Endpoint.from_url(url) is None


async def test_concurrent_callers_each_get_their_own_reply(
    connection: RedisConnection, prefix: str
) -> None:
    keys = [f"{prefix}:k{i}" for i in range(300)]
    await asyncio.gather(*(connection.call("SET", key, key.upper()) for key in keys))
    replies = await asyncio.gather(*(connection.call("GET", key) for key in keys))
    assert replies == [key.upper().encode() for key in keys]
    assert await connection.call("GET", f"{prefix}:absent") is None


async def test_a_cancelled_caller_leaves_the_replies_in_order(
    connection: RedisConnection, prefix: str
) -> None:
    await connection.call("SET", f"{prefix}:a", "A")
    await connection.call("SET", f"{prefix}:b", "B")
    # Sent, then its caller gives up before the reply: the next caller must not get it.
    first = asyncio.ensure_future(connection.call("GET", f"{prefix}:a"))
    await asyncio.sleep(0)
    first.cancel()
    assert await connection.call("GET", f"{prefix}:b") == b"B"
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_an_error_reply_raises_and_the_socket_stays_usable(
    connection: RedisConnection, prefix: str
) -> None:
    await connection.call("SET", f"{prefix}:text", "not a number")
    with pytest.raises(redis.exceptions.ResponseError, match="not an integer"):
        await connection.call("INCR", f"{prefix}:text")
    assert connection.state()["available"] is True
    assert await connection.call("INCR", f"{prefix}:n") == 1


async def test_a_script_the_server_forgot_is_loaded_again(
    connection: RedisConnection, prefix: str
) -> None:
    script = LuaScript(connection, "return redis.call('INCRBY', KEYS[1], ARGV[1])")
    await connection.call("SCRIPT", "FLUSH")
    assert await script([f"{prefix}:s"], [2]) == 2
    assert await script([f"{prefix}:s"], [3]) == 5


async def test_password_and_database_from_the_url(redis_server: RedisServer, prefix: str) -> None:
    admin = RedisConnection(redis_server.url)
    await admin.run(
        lambda client: client.acl_setuser(
            prefix, enabled=True, passwords=["+pw"], keys=["*"], commands=["+@all"]
        )
    )
    address = f"127.0.0.1:{redis_server.port}"
    user = RedisConnection(f"redis://{prefix}:pw@{address}/5")
    in_five = RedisConnection(f"redis://{address}/5")  # read through redis-py
    wrong = _pipelined(f"redis://{prefix}:wrong@{address}/0")
    try:
        await user.call("SET", f"{prefix}:in5", "yes")
        assert await in_five.run(lambda client: client.get(f"{prefix}:in5")) == b"yes"
        assert await admin.call("GET", f"{prefix}:in5") is None  # database 0
        with pytest.raises(redis.exceptions.AuthenticationError):
            await wrong.execute("PING")
    finally:
        wrong.close()
        await admin.run(lambda client: client.acl_deluser(prefix))
        for connection in (user, in_five, admin):
            await connection.close()


async def test_a_stalled_server_fails_every_waiting_command_in_time() -> None:
    server = RedisServer().start()  # its own server: this test freezes it
    pipelined = _pipelined(server.url)
    try:
        assert await pipelined.execute("PING") == b"PONG"
        server.freeze()
        started = time.perf_counter()
        results = await asyncio.gather(
            *(pipelined.execute("GET", f"k{i}") for i in range(5)), return_exceptions=True
        )
        assert time.perf_counter() - started < 5.0  # the 0.25 s timeout; a hang never ends
        assert all(isinstance(result, redis.exceptions.TimeoutError) for result in results)
        server.thaw()
        # The stalled socket was dropped: the next command connects afresh.
        assert await pipelined.execute("PING") == b"PONG"
    finally:
        pipelined.close()
        server.thaw()
        server.stop()


async def test_a_restart_is_survived_through_the_circuit() -> None:
    server = RedisServer().start()  # its own server: this test restarts it
    connection = RedisConnection(server.url, backoff_initial_seconds=0.05)
    try:
        await connection.call("SET", "k", "v")
        server.stop()
        with pytest.raises(StoreUnavailable):
            await connection.call("GET", "k")
        assert connection.state()["last_error"] == "ConnectionError"
        server.start()
        deadline = time.monotonic() + 10
        while True:
            try:
                assert await connection.call("GET", "k") is None  # restarted empty
                break
            except StoreUnavailable:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
        assert connection.state()["available"] is True
    finally:
        await connection.close()
        server.stop()


async def test_a_url_only_redis_py_understands_still_serves_the_hot_commands(
    redis_server: RedisServer, prefix: str
) -> None:
    # URL options are redis-py's: the hot commands then go through redis-py.
    connection = RedisConnection(f"{redis_server.url}?socket_keepalive=true")
    try:
        await connection.call("SET", f"{prefix}:q", "v")
        assert await connection.call("GET", f"{prefix}:q") == b"v"
        script = LuaScript(connection, "return redis.call('STRLEN', KEYS[1])")
        await connection.call("SCRIPT", "FLUSH")
        assert await script([f"{prefix}:q"], []) == 1
    finally:
        await connection.close()


async def test_an_argument_that_cannot_be_sent_leaves_the_socket_in_step(
    connection: RedisConnection, prefix: str
) -> None:
    await connection.call("SET", f"{prefix}:x", "X")
    with pytest.raises(TypeError):
        await connection.call("GET", None)  # type: ignore[arg-type]
    assert await connection.call("GET", f"{prefix}:x") == b"X"
