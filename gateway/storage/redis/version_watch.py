"""Versions read on every request, answered from memory while Redis reports each change.

Every request of a tenant with knowledge enabled reads the tenant's knowledge version
(`knowledge-version:<tenant>`), exact hits included: on Redis a round trip and about
0.03 ms of the gateway's CPU per hit, 12 % of an exact hit
(docs/measurements.md#knowledge-version-on-a-redis-hit). Every write that bumps a
version then PUBLISHes the tenant on `<prefix>:knowledge-versions` before its caller
answers, and `VersionWatch` keeps one socket subscribed to that channel. While it is
subscribed, a version read from Redis is remembered and answered from memory until:

- a message names its tenant (another replica wrote);
- this process writes (`forget`, when the write returns: before the caller answers);
- the socket drops (everything is forgotten, reads go to Redis until it is back);
- `max_age_seconds` pass: the bound for a writer that does not publish (a gateway of an
  older version during a rolling upgrade, a user whose ACL forbids PUBLISH, a writer
  that died between its write and the message) and for a link that died without a
  reset.

A read that was in flight when a message (or a reconnection) came in is not remembered:
its reply may predate the write (`generation`). So a change made anywhere is seen by
every replica as soon as Redis has delivered its message, under a millisecond on one
network, where every read used to go to Redis.

That is a window: a request that reaches another replica at the moment of a change may
still get the old knowledge (4 of 300 changes in `gateway eval freshness --backend
redis`, which reads right after each write). So it is opt-in: the default,
`storage.redis_knowledge_version_memory_seconds: 0`, keeps the read on every request.

No watch, and every read goes to Redis as before: with `max_age_seconds` 0, for a URL
only redis-py speaks (TLS, query options: `Endpoint.from_url`), and while the socket is
not subscribed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, cast

import hiredis

from gateway.storage.redis.pipelined import (
    Encodable,
    Endpoint,
    auth_command,
    keep_alive,
    open_socket,
)
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

# Tenants remembered at once; past this the oldest is dropped (and read again).
MAX_REMEMBERED = 65_536
_RETRY_INITIAL_SECONDS = 0.5
_RETRY_MAX_SECONDS = 10.0


class _Subscriber(asyncio.Protocol):
    """One subscribed socket: reports the confirmation, each message and its end."""

    def __init__(
        self,
        on_subscribed: Callable[[], None],
        on_message: Callable[[bytes], None],
    ) -> None:
        self._on_subscribed = on_subscribed
        self._on_message = on_message
        self._reader = hiredis.Reader()
        self._transport: asyncio.Transport | None = None
        self.ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        keep_alive(transport)

    def send(self, *commands: tuple[Encodable, ...]) -> None:
        assert self._transport is not None
        # (hiredis's stub types the tuple as one element; it takes any length.)
        self._transport.write(b"".join(hiredis.pack_command(c) for c in commands))  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        try:
            self._reader.feed(data)
            while (reply := self._reader.gets()) is not False:
                self._handle(reply)
        except hiredis.ProtocolError:
            self.end("redis protocol error")

    def _handle(self, reply: Any) -> None:
        if isinstance(reply, Exception):  # AUTH refused, or a server in trouble
            self.end(f"refused: {str(reply)[:80]}")
            return
        if not isinstance(reply, list) or len(reply) < 3:
            return  # AUTH's +OK
        kind = reply[0]
        if kind == b"subscribe":
            self._on_subscribed()
        elif kind == b"message" and isinstance(reply[2], bytes):
            self._on_message(reply[2])

    def connection_lost(self, exc: Exception | None) -> None:
        self.end("connection lost")

    def end(self, why: str) -> None:
        if not self.ended.done():
            self.ended.set_result(why)
        if self._transport is not None:
            self._transport.abort()


class VersionWatch:
    """What `RedisKnowledgeStore.version` may answer without asking Redis."""

    def __init__(
        self,
        endpoint: Endpoint | None,
        channel: str,
        *,
        max_age_seconds: float,
        connect_timeout_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.channel = channel
        self._endpoint = endpoint if max_age_seconds > 0 else None
        self._max_age_seconds = max_age_seconds
        self._connect_timeout_seconds = connect_timeout_seconds
        self._clock = clock
        self._remembered: dict[str, tuple[str, float]] = {}
        # Bumped by every message, write and (re)subscription: a read that started
        # under an older generation is not remembered.
        self.generation = 0
        self.subscribed = False
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._log = ThrottledLogger(logger, interval_seconds=60.0)

    def recall(self, tenant: str) -> str | None:
        """The tenant's version if it is remembered and still good; starts the watch on
        first use (the store is built before the loop serves requests)."""
        if not self.subscribed:
            self._start()
            return None
        entry = self._remembered.get(tenant)
        if entry is None:
            return None
        version, read_at = entry
        if self._clock() - read_at > self._max_age_seconds:
            del self._remembered[tenant]
            return None
        return version

    def remember(self, tenant: str, version: str, generation: int) -> None:
        """`version`, read from Redis by a read that started at `generation`."""
        if not self.subscribed or generation != self.generation:
            return
        if len(self._remembered) >= MAX_REMEMBERED and tenant not in self._remembered:
            del self._remembered[next(iter(self._remembered))]
        self._remembered[tenant] = (version, self._clock())

    def forget(self, tenant: str) -> None:
        """This process changed the tenant's version (or may have: a failed write)."""
        self.generation += 1
        self._remembered.pop(tenant, None)

    def _forget_all(self) -> None:
        self.generation += 1
        self._remembered.clear()

    def _start(self) -> None:
        if self._task is None and self._endpoint is not None and not self._closed:
            self._task = asyncio.get_running_loop().create_task(self._watch(self._endpoint))

    async def _watch(self, endpoint: Endpoint) -> None:
        delay = _RETRY_INITIAL_SECONDS
        while not self._closed:
            why = await self._subscribe_once(endpoint)
            was_subscribed, self.subscribed = self.subscribed, False
            self._forget_all()
            if was_subscribed:
                delay = _RETRY_INITIAL_SECONDS
            self._log.warning(
                "knowledge versions are read from redis on every request until the "
                "subscription is back (%s)",
                why,
            )
            await asyncio.sleep(delay)
            delay = min(delay * 2, _RETRY_MAX_SECONDS)

    async def _subscribe_once(self, endpoint: Endpoint) -> str:

        def on_subscribed() -> None:
            self._forget_all()
            self.subscribed = True

        def on_message(tenant: bytes) -> None:
            self.forget(tenant.decode("utf-8", "replace"))

        def protocol() -> _Subscriber:
            return _Subscriber(on_subscribed, on_message)

        try:
            subscriber = await open_socket(endpoint, protocol, self._connect_timeout_seconds)
        except (TimeoutError, OSError) as exc:
            return f"cannot connect: {type(exc).__name__}"
        auth = auth_command(endpoint)
        subscriber.send(*([] if auth is None else [auth]), ("SUBSCRIBE", self.channel))
        try:
            return await asyncio.shield(subscriber.ended)
        except asyncio.CancelledError:
            subscriber.end("closed")
            raise

    async def close(self) -> None:
        self._closed = True
        self.subscribed = False
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
