"""One multiplexed Redis socket for the commands on the request path.

redis-py spends about 0.1 ms of the gateway's CPU on every command on this class of
machine (a pool checkout, a timeout context per read, response callbacks), and every
request sends a few: the exact read, the rate-limit script, version reads, the KNN
search, the single-flight lease and the stores' write scripts.
This connection packs each command with hiredis, writes it at once to one socket shared
by every caller, and hands replies out in the order they come (Redis answers one
connection's commands in the order it received them): about a sixth of that CPU
(docs/measurements.md#rate-limit-check-on-a-hit). Admin work, scans, pipelines and
transactions stay on redis-py.

Failure rules match the redis-py client of `connection.py`: connecting is bounded by
the connect timeout, every command by the operation timeout. A command that is not
answered in time fails every command still waiting on the socket (the server is stalled
or the link is gone; their replies could no longer be matched) and the socket is
dropped, so the next command connects again. A connection lost fails its waiting
commands the same way. Error replies raise `ResponseError` (`NoScriptError` for
`NOSCRIPT`) and leave the socket in use.
"""

from __future__ import annotations

import asyncio
import collections
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from urllib.parse import unquote, urlsplit

import hiredis
import redis.exceptions

Encodable = bytes | str | int | float
ProtocolT = TypeVar("ProtocolT", bound=asyncio.Protocol)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and as whom to connect, from a `redis://` or `unix://` URL."""

    host: str = "localhost"
    port: int = 6379
    socket_path: str | None = None
    username: str | None = None
    password: str | None = None
    db: int = 0

    @classmethod
    def from_url(cls, url: str) -> Endpoint | None:
        """None for what only redis-py handles (TLS, unknown schemes, query options)."""
        parts = urlsplit(url)
        if parts.scheme not in ("redis", "unix") or parts.query:
            return None
        username = unquote(parts.username) if parts.username else None
        password = unquote(parts.password) if parts.password else None
        if parts.scheme == "unix":
            return cls(socket_path=parts.path, username=username, password=password)
        db_text = parts.path.strip("/")
        if db_text and not db_text.isdigit():
            return None
        return cls(
            host=parts.hostname or "localhost",
            port=parts.port or 6379,
            username=username,
            password=password,
            db=int(db_text or 0),
        )


def auth_command(endpoint: Endpoint) -> tuple[Encodable, ...] | None:
    """The AUTH a connection to `endpoint` sends first; None without a password."""
    if endpoint.password is None:
        return None
    user = () if endpoint.username is None else (endpoint.username,)
    return ("AUTH", *user, endpoint.password)


async def open_socket(
    endpoint: Endpoint, protocol: Callable[[], ProtocolT], timeout_seconds: float
) -> ProtocolT:
    """A connection to `endpoint` (TCP or unix socket) driven by `protocol()`; raises
    TimeoutError or OSError when it cannot be made within `timeout_seconds`."""
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(timeout_seconds):
        if endpoint.socket_path is not None:
            _, made = await loop.create_unix_connection(protocol, endpoint.socket_path)
        else:
            _, made = await loop.create_connection(protocol, endpoint.host, endpoint.port)
    return made


def keep_alive(transport: asyncio.BaseTransport) -> None:
    """TCP keepalive on the transport's socket: a restart closes the socket (seen at
    once); keepalive finds a peer that vanished while the socket sat idle (what
    redis-py's health check did)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)


def _reply_error(message: str) -> Exception:
    if message.startswith("NOSCRIPT"):
        return redis.exceptions.NoScriptError(message)
    return redis.exceptions.ResponseError(message)


class _Waiter:
    __slots__ = ("deadline", "future")

    def __init__(self, future: asyncio.Future[Any], deadline: float) -> None:
        self.future = future
        self.deadline = deadline


class _Socket(asyncio.Protocol):
    """One connection: commands written in order, replies matched in order."""

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout_seconds: float) -> None:
        self._loop = loop
        self._timeout_seconds = timeout_seconds
        self._reader = hiredis.Reader(replyError=_reply_error)
        self._waiting: collections.deque[_Waiter] = collections.deque()
        self._transport: asyncio.Transport | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        self.open = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses; they write alike.
        self._transport = cast(asyncio.Transport, transport)
        self.open = True
        keep_alive(transport)

    def data_received(self, data: bytes) -> None:
        try:
            self._reader.feed(data)
            while self._waiting:
                reply = self._reader.gets()
                if reply is False:
                    return
                future = self._waiting.popleft().future
                if not future.done():  # its caller may have been cancelled
                    future.set_result(reply)
        except hiredis.ProtocolError as exc:
            self._fail(redis.exceptions.ConnectionError(f"redis protocol error: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(redis.exceptions.ConnectionError("connection to redis lost"))

    def send(self, args: tuple[Encodable, ...]) -> asyncio.Future[Any]:
        if not self.open or self._transport is None:
            raise redis.exceptions.ConnectionError("connection to redis lost")
        # Packed first: an argument it cannot encode raises before anything is queued.
        # (hiredis's stub types the tuple as one element; it takes any length.)
        packed = hiredis.pack_command(args)  # type: ignore[arg-type]
        future = self._loop.create_future()
        deadline = self._loop.time() + self._timeout_seconds
        self._waiting.append(_Waiter(future, deadline))
        self._transport.write(packed)
        if self._watchdog is None:
            self._watchdog = self._loop.call_at(deadline, self._check_deadline)
        return future

    def _check_deadline(self) -> None:
        """One timer per socket, not per command: replies come in order, so only the
        oldest waiting command's deadline matters."""
        self._watchdog = None
        if not self._waiting:
            return
        head = self._waiting[0].deadline
        if head <= self._loop.time():
            self._fail(redis.exceptions.TimeoutError("redis did not answer in time"))
        else:
            self._watchdog = self._loop.call_at(head, self._check_deadline)

    def _fail(self, error: Exception) -> None:
        self.open = False
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        waiting, self._waiting = self._waiting, collections.deque()
        for waiter in waiting:
            if not waiter.future.done():
                waiter.future.set_exception(error)
                # Marked retrieved: a caller cancelled meanwhile will never read it.
                waiter.future.exception()
        if self._transport is not None:
            self._transport.abort()

    def close(self) -> None:
        self._fail(redis.exceptions.ConnectionError("connection to redis closed"))


class PipelinedRedis:
    """`execute(*args)`: one command's reply (bytes, int, list or None), raising
    `redis.exceptions.ConnectionError`/`TimeoutError` when the server cannot be reached
    or does not answer in time, `ResponseError` on an error reply."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        operation_timeout_seconds: float,
        connect_timeout_seconds: float,
    ) -> None:
        self._endpoint = endpoint
        self._operation_timeout = operation_timeout_seconds
        self._connect_timeout = connect_timeout_seconds
        self._socket: _Socket | None = None
        self._connecting: asyncio.Lock | None = None

    async def execute(self, *args: Encodable) -> Any:
        channel = self._socket
        if channel is None or not channel.open:
            channel = await self._connected()
        reply = await channel.send(args)
        if isinstance(reply, Exception):
            raise reply
        return reply

    async def _connected(self) -> _Socket:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            # Another caller may have connected while this one waited for the lock.
            if self._socket is not None and self._socket.open:
                return self._socket
            channel = await self._connect()
            self._socket = channel
            return channel

    async def _connect(self) -> _Socket:
        loop = asyncio.get_running_loop()
        endpoint = self._endpoint

        def protocol() -> _Socket:
            return _Socket(loop, self._operation_timeout)

        try:
            channel = await open_socket(endpoint, protocol, self._connect_timeout)
        except TimeoutError as exc:
            raise redis.exceptions.TimeoutError("connecting to redis timed out") from exc
        except OSError as exc:
            raise redis.exceptions.ConnectionError(f"cannot connect to redis: {exc}") from exc
        handshake: list[tuple[tuple[Encodable, ...], type[Exception]]] = []
        auth = auth_command(endpoint)
        if auth is not None:
            handshake.append((auth, redis.exceptions.AuthenticationError))
        if endpoint.db:
            handshake.append((("SELECT", endpoint.db), redis.exceptions.ResponseError))
        try:
            for command, refused in handshake:
                reply = await channel.send(command)
                if isinstance(reply, Exception):
                    raise refused(str(reply))
        except BaseException:
            channel.close()
            raise
        return channel

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
