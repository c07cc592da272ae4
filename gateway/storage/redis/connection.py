"""One Redis client per process, with bounded timeouts and a fail-open circuit.

A cache must never make a request slower than having no cache. So every command is
bounded (0.25 s per socket operation, 0.5 s to connect), redis-py's own retries with
back-off are switched off (its default would wait seconds on a dead server), and after
a connection error or timeout the circuit opens: for a back-off period (0.5 s, doubling
to 10 s) every operation raises `StoreUnavailable` at once, so the pipeline serves from
the provider without waiting on a socket per request. When the period is over, one
operation is let through as a probe; if it succeeds the circuit closes and `generation`
moves on (the server may have restarted empty, so stores re-create what they need, such
as search indexes).

Errors that are not about the connection (a `ResponseError` from a bad command, an
out-of-memory refusal) pass through unchanged: the server answered, so it is reachable.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import redis.exceptions
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from gateway.errors import GatewayInternalError
from gateway.storage.protocols import StoreUnavailable
from gateway.storage.redis.pipelined import Encodable, Endpoint, PipelinedRedis
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

T = TypeVar("T")

SEARCH_MISSING_MESSAGE = (
    "needs Redis Stack, Redis 8 or a managed Redis with search (the RediSearch module)"
)
# Module names RediSearch has registered under across versions and distributions.
_SEARCH_MODULE_NAMES = frozenset({"search", "ft", "searchlight"})
# How far down a chain of wrapped exceptions (redisvl wraps redis-py's) to look.
_MAX_CAUSE_DEPTH = 8


class RedisSearchMissing(GatewayInternalError, RuntimeError):
    """The server answers but has no search commands: a deployment error, not an outage."""

    def __init__(self, detail: str | None = None) -> None:
        message = SEARCH_MISSING_MESSAGE
        super().__init__(f"{message}: {detail}" if detail else message)


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it wraps (redisvl wraps redis-py's), outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < _MAX_CAUSE_DEPTH:
        chain.append(current)
        if current.__cause__ is not None:
            current = current.__cause__
        else:
            current = None if current.__suppress_context__ else current.__context__
    return chain


def connection_error_in(exc: BaseException) -> BaseException | None:
    """The exception in `exc`'s chain that says the server could not be reached or did
    not answer in time; None when there is none."""
    # builtin TimeoutError (asyncio's too, since 3.11) is an OSError.
    kinds = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)
    return next((link for link in _chain(exc) if isinstance(link, kinds)), None)


def _server_answered(exc: BaseException) -> bool:
    """An error reply (bad command, OOM, missing index): the server is reachable."""
    return any(isinstance(link, redis.exceptions.ResponseError) for link in _chain(exc))


def _address_of(url: str) -> tuple[str, str | None]:
    """(host:port or socket path, password) parsed from a Redis URL: logs show the first
    and must never show the second."""
    parts = urlsplit(url)
    password = unquote(parts.password) if parts.password else None
    if parts.scheme == "unix":
        return parts.path or "unix-socket", password
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}", password


class RedisConnection:
    """The process's Redis client and its circuit. Stores run commands through `run()`."""

    def __init__(
        self,
        url: str,
        *,
        operation_timeout_seconds: float = 0.25,
        connect_timeout_seconds: float = 0.5,
        health_check_interval_seconds: float = 15.0,
        backoff_initial_seconds: float = 0.5,
        backoff_max_seconds: float = 10.0,
        log_interval_seconds: float = 30.0,
        max_connections: int = 64,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if operation_timeout_seconds <= 0 or connect_timeout_seconds <= 0:
            raise ValueError("Redis timeouts must be positive")
        if max_connections <= 0:
            raise ValueError("max_connections must be positive")
        self.address, self._password = _address_of(url)
        self._client = Redis.from_url(
            url,
            socket_timeout=operation_timeout_seconds,
            socket_connect_timeout=connect_timeout_seconds,
            health_check_interval=health_check_interval_seconds,
            # Headroom over the slots below for callers of `client` outside `run()`.
            max_connections=max_connections + 8,
            # One immediate retry on a connection error only: it replaces a pooled
            # connection that died while idle (server restart). Never on timeouts: a
            # slow server gets no second chance to make the request slower.
            retry=Retry(NoBackoff(), 1, supported_errors=(redis.exceptions.ConnectionError,)),
        )
        # Where a socket of the gateway's own connects; None for what only redis-py speaks.
        self.endpoint = Endpoint.from_url(url)
        self.connect_timeout_seconds = connect_timeout_seconds
        self._pipelined = _pipelined_for(
            self.endpoint, operation_timeout_seconds, connect_timeout_seconds
        )
        self._backoff_initial = backoff_initial_seconds
        self._backoff_max = backoff_max_seconds
        self._backoff = backoff_initial_seconds
        self._clock = clock
        self._open_until: float | None = None  # None: circuit closed, Redis usable
        self._probe_in_flight = False
        self._log = ThrottledLogger(logger, interval_seconds=log_interval_seconds)
        self._busy_log = ThrottledLogger(logger, interval_seconds=log_interval_seconds)
        # redis-py's pool raises at once when all its connections are in use (a
        # ConnectionError, which would look like an outage). Operations queue here
        # instead, for at most the connect timeout: a burst waits a little, a saturated
        # process sheds load without tripping the circuit.
        self._slots = asyncio.Semaphore(max_connections)
        self._slot_wait_seconds = connect_timeout_seconds
        self._max_connections = max_connections
        self.failures_total = 0
        self.last_error: str | None = None
        # Bumped each time the circuit closes again after an outage.
        self.generation = 0

    @property
    def client(self) -> Redis:
        """The raw client, for building objects (indexes, scripts) that stores then use
        inside `run()`. Commands sent around `run()` bypass the circuit."""
        return self._client

    @property
    def available(self) -> bool:
        return self._open_until is None

    def state(self) -> dict[str, Any]:
        """For /readyz."""
        return {
            "backend": "redis",
            "available": self.available,
            "failures_total": self.failures_total,
            "last_error": self.last_error,
        }

    async def run(self, operation: Callable[[Redis], Awaitable[T]]) -> T:
        """Run `operation(client)` through the circuit.

        Raises `StoreUnavailable` at once while the circuit is open, or when the
        operation fails to reach the server (the cause is chained). Other errors pass
        through unchanged.
        """
        return await self._guarded(self._slotted(operation))

    async def call(self, *args: Encodable) -> Any:
        """One small command (GET, EVALSHA) through the circuit, on the pipelined
        socket: the hot path's way to Redis. Fails as `run` does."""
        pipelined = self._pipelined
        if pipelined is None:
            command = self._client.execute_command(*args)  # type: ignore[no-untyped-call]
            return await self._guarded(command)
        return await self._guarded(pipelined.execute(*args))

    async def _slotted(self, operation: Callable[[Redis], Awaitable[T]]) -> T:
        await self._acquire_slot()
        try:
            return await operation(self._client)
        finally:
            self._slots.release()

    async def _guarded(self, operation: Awaitable[T]) -> T:
        try:
            probing = self._admit()
        except BaseException:
            _close_unawaited(operation)
            raise
        try:
            try:
                result = await operation
            except Exception as exc:
                cause = connection_error_in(exc)
                if cause is not None:
                    self._failed(cause, probing)
                    raise StoreUnavailable(f"redis at {self.address} unavailable") from exc
                if _server_answered(exc):
                    self._succeeded(probing)
                raise
        finally:
            if probing:
                # Also on cancellation: never leave the circuit waiting on a dead probe.
                self._probe_in_flight = False
        self._succeeded(probing)
        return result

    async def _acquire_slot(self) -> None:
        if not self._slots.locked():
            await self._slots.acquire()  # a free slot: taken without waiting
            return
        try:
            async with asyncio.timeout(self._slot_wait_seconds):
                await self._slots.acquire()
        except TimeoutError:
            self._busy_log.warning(
                "all %d redis connections busy; caches fail open for this request",
                self._max_connections,
            )
            raise StoreUnavailable(f"redis at {self.address} busy") from None

    def _admit(self) -> bool:
        """Whether this call is the probe; raises while the circuit is open."""
        if self._open_until is None:
            return False
        remaining = self._open_until - self._clock()
        if remaining > 0 or self._probe_in_flight:
            # One probe at a time: the others fail fast instead of all waiting for the
            # connect timeout against a server that may still be down.
            raise StoreUnavailable(
                f"redis at {self.address} unavailable; next attempt in {max(remaining, 0):.1f} s"
            )
        self._probe_in_flight = True
        return True

    def _failed(self, exc: BaseException, probing: bool) -> None:
        self.failures_total += 1
        self.last_error = type(exc).__name__
        if self._open_until is None:
            self._backoff = self._backoff_initial
        elif probing:
            self._backoff = min(self._backoff * 2, self._backoff_max)
        else:
            # Admitted before the circuit opened and failed with the others: the
            # back-off already running stands.
            return
        self._open_until = self._clock() + self._backoff
        self._log.warning(
            "redis at %s unavailable (%s: %s); caches fail open, next attempt in %.1f s",
            self.address,
            type(exc).__name__,
            self._redact(str(exc)),
            self._backoff,
        )

    def _succeeded(self, probing: bool) -> None:
        if self._open_until is None:
            return
        if not probing:
            # A call admitted before the circuit opened that still got through proves
            # little; let the probe decide.
            return
        self._open_until = None
        self._backoff = self._backoff_initial
        self.generation += 1
        logger.info(
            "redis at %s is reachable again (%d failures so far)",
            self.address,
            self.failures_total,
        )

    def _redact(self, text: str) -> str:
        if self._password:
            text = text.replace(self._password, "***")
        return text[:200]

    async def ping(self) -> bool:
        try:
            return bool(await self.run(lambda client: client.ping()))
        except (StoreUnavailable, redis.exceptions.RedisError):
            return False

    async def check_search_module(self) -> None:
        """Raise `RedisSearchMissing` unless the server has the search commands.

        `FT._LIST` answers on every server with search; only when it fails is `MODULE
        LIST` consulted (managed services often disable it, and a server may expose search
        without listing a module). Raises `StoreUnavailable` when unreachable.
        """
        try:
            await self.run(_list_search_indexes)
            return
        except redis.exceptions.ResponseError as exc:
            ft_error = str(exc)
        try:
            modules = await self.run(lambda client: client.module_list())
        except redis.exceptions.ResponseError as exc:
            raise RedisSearchMissing(f"FT._LIST: {ft_error}; MODULE LIST: {exc}") from exc
        if any(_module_name(module) in _SEARCH_MODULE_NAMES for module in modules or ()):
            return
        raise RedisSearchMissing(f"FT._LIST: {ft_error}")

    async def close(self) -> None:
        if self._pipelined is not None:
            self._pipelined.close()
        await self._client.aclose()


def _pipelined_for(
    endpoint: Endpoint | None, operation_timeout_seconds: float, connect_timeout_seconds: float
) -> PipelinedRedis | None:
    """The socket for the hot path's small commands (`call`, `LuaScript`); None for
    what only redis-py speaks (TLS, URL options): those commands then use redis-py."""
    if endpoint is None:
        return None
    return PipelinedRedis(
        endpoint,
        operation_timeout_seconds=operation_timeout_seconds,
        connect_timeout_seconds=connect_timeout_seconds,
    )


def _close_unawaited(operation: Awaitable[Any]) -> None:
    """A coroutine refused before it ran: closed, so Python does not warn about it."""
    close = getattr(operation, "close", None)
    if close is not None:
        close()


async def _list_search_indexes(client: Redis) -> Any:
    # redis-py has no typed method for FT._LIST; execute_command is untyped.
    return await client.execute_command("FT._LIST")  # type: ignore[no-untyped-call]


def _module_name(module: Any) -> str:
    """The name in one MODULE LIST row: a dict under RESP3, a flat list under RESP2."""
    if isinstance(module, dict):
        items = list(module.items())
    elif isinstance(module, list | tuple):
        items = list(zip(module[::2], module[1::2], strict=False))
    else:
        return ""
    for key, value in items:
        key_text = key.decode() if isinstance(key, bytes) else str(key)
        if key_text == "name":
            return (value.decode() if isinstance(value, bytes) else str(value)).lower()
    return ""


def delete_keys(keys: list[bytes]) -> Callable[[Redis], Awaitable[int]]:
    """An operation for `RedisConnection.run` that deletes `keys`; returns how many."""

    async def delete(client: Redis) -> int:
        return int(await client.delete(*keys))

    return delete
