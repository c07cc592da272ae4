"""Open-loop load: requests sent on a fixed schedule, whatever the server's pace.

A closed loop (each worker waits for its answer) slows down with the server and so hides
a stall: during a Redis outage it would simply send fewer requests. Here request i is
due at `i / rate` seconds, goes out then on an idle keep-alive connection (a new one when
none is idle), and its latency counts from when it was due, so time spent waiting for a
connection is counted too (no coordinated omission).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway_tools.bench.constants import HOST
from gateway_tools.bench.http_client import HttpConnection
from gateway_tools.bench.phases import send
from gateway_tools.bench.prompts import Request
from gateway_tools.bench.targets import Target

# Connections the client may hold open; past that a due request waits for one (and the
# wait shows in its latency). At 50 req/s and ~10 ms each, ~1 is busy on average.
MAX_CONNECTIONS = 128


@dataclass(frozen=True, slots=True)
class Outcome:
    due: float  # seconds from the start of the run
    kind: str
    status: int | None  # None: no answer (refused, reset, timed out)
    layer: str | None
    reason: str | None  # x-gateway-cache-reason
    latency_ms: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200


class ConnectionPool:
    """Idle keep-alive connections to one server, opened on demand up to a limit."""

    def __init__(self, port: int, limit: int = MAX_CONNECTIONS) -> None:
        self._port = port
        self._limit = limit
        self._idle: asyncio.Queue[HttpConnection] = asyncio.Queue()
        self._all: list[HttpConnection] = []

    async def acquire(self) -> HttpConnection:
        if self._idle.empty() and len(self._all) < self._limit:
            connection = HttpConnection(HOST, self._port)  # connects on first request
            self._all.append(connection)
            return connection
        return await self._idle.get()

    def release(self, connection: HttpConnection) -> None:
        self._idle.put_nowait(connection)

    @property
    def opened(self) -> int:
        return len(self._all)

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self._all))


async def _one(
    pool: ConnectionPool, target: Target, head: bytes, request: Request, due: float, start: float
) -> Outcome:
    kind, body = request
    connection = await pool.acquire()
    try:
        answer = await send(connection, head, body)
    finally:
        pool.release(connection)  # a failed request left it closed; it reconnects
    latency_ms = (time.perf_counter() - due) * 1000
    if isinstance(answer, str):
        return Outcome(due - start, kind, None, None, None, latency_ms, answer)
    headers = answer.headers
    error = None if answer.status == 200 else repr(answer.body[:200])
    return Outcome(
        due - start,
        kind,
        answer.status,
        target.layer_of(headers),
        headers.get("x-gateway-cache-reason"),
        latency_ms,
        error,
    )


async def open_loop(
    target: Target,
    next_request: Callable[[], Request],
    rate: float,
    seconds: float,
    start: float,
) -> tuple[list[Outcome], float]:
    """Send `rate * seconds` requests on schedule from `start` (a `time.perf_counter`
    reading, shared with whatever else the caller times); wait for every answer.

    Returns the outcomes, in the order they were due, and the largest lag of a send
    behind its due time (the client itself falling behind would lower the rate)."""
    pool = ConnectionPool(target.server.port)
    head = target.endpoint.head
    tasks: list[asyncio.Task[Outcome]] = []
    max_lag = 0.0
    try:
        for index in range(round(rate * seconds)):
            due = start + index / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            max_lag = max(max_lag, time.perf_counter() - due)
            request = next_request()
            tasks.append(asyncio.create_task(_one(pool, target, head, request, due, start)))
        outcomes = list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
        await pool.close()
    return outcomes, max_lag
