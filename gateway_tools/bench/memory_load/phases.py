"""The measured phases of `benchmarks/memory_load.py`: misses and exact hits, the
kinds interleaved request by request (so every kind sees the same machine noise), each
request's own stage timings read back from the gateway's decision records
(`GET /admin/decisions`, matched by the `x-request-id` the client sent)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway_tools.bench.constants import CHAT_PATH, HOST, REQUEST_TIMEOUT_SECONDS, BenchError
from gateway_tools.bench.http_client import (
    REQUEST_FAILURES,
    HttpConnection,
    HttpResponse,
    request_head,
)
from gateway_tools.bench.memory_load.scenario import ADMIN_KEY, Kind

# The gateway keeps its last 1,000 decision records: read them back well before then.
COLLECT_EVERY_REQUESTS = 400
DECISIONS_LIMIT = 1000
RECORD_WAIT_SECONDS = 2.0
STORE_UNAVAILABLE = "miss/store_unavailable"
# The memory stage's note when it failed open and forwarded without memory.
MEMORY_UNAVAILABLE = "memory_unavailable"


@dataclass(slots=True)
class KindSeries:
    """One kind's requests: end-to-end latency, and the gateway's record of each."""

    latencies_ms: dict[str, float] = field(default_factory=dict)  # by request id
    records: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # by request id
    layers: Counter[str] = field(default_factory=Counter)  # "layer/reason"
    errors: int = 0
    wrong_layer: int = 0
    reconnects: int = 0  # idle connections the server had closed (request sent again)
    first_error: str | None = None

    def fail(self, reason: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = reason

    def stage_ms(self, stage: str) -> list[float]:
        """The stage's milliseconds over the recorded requests (0 where it did not run)."""
        return [float(r.get("stages_ms", {}).get(stage, 0.0)) for r in self.records.values()]

    def field_values(self, name: str) -> list[float]:
        return [float(r.get(name) or 0) for r in self.records.values()]


class Client:
    """The gateway on one keep-alive connection per kind, and the admin reads."""

    def __init__(self, port: int, run_id: str) -> None:
        self.port = port
        self.run_id = run_id
        self._connections: dict[str, HttpConnection] = {}
        self._sent = 0

    async def call(
        self, kind: Kind, body: bytes, series: KindSeries, expect: Callable[[str], bool]
    ) -> None:
        """One request of `kind`; `expect` says whether its "layer/reason" is the path
        being measured."""
        connection = self._connections.get(kind.name)
        if connection is None:
            connection = self._connections[kind.name] = HttpConnection(HOST, self.port)
        self._sent += 1
        request_id = f"ml-{self.run_id}-{kind.slug}-{self._sent}"
        head = request_head(
            "POST",
            self.port,
            CHAT_PATH,
            kind.tenant.api_key,
            kind.headers(request_id, f"ml-{self.run_id}-{kind.slug}"),
        )
        try:
            response, elapsed_ms = await _send(connection, head, body)
        except (EOFError, ConnectionResetError):
            # The server closed this connection while it sat idle (its keep-alive
            # timeout, 5 s: a kind waits while another's first request loads a whole
            # scope); nothing was answered, so the request goes again on a new one.
            series.reconnects += 1
            try:
                response, elapsed_ms = await _send(connection, head, body)
            except REQUEST_FAILURES as exc:
                series.fail(f"{kind.name}: {type(exc).__name__}: {exc}")
                return
        except REQUEST_FAILURES as exc:
            series.fail(f"{kind.name}: {type(exc).__name__}: {exc}")
            return
        if response.status != 200:
            series.fail(f"{kind.name}: HTTP {response.status}: {response.body[:200]!r}")
            return
        layer = response.headers.get("x-gateway-cache", "(none)")
        reason = response.headers.get("x-gateway-cache-reason")
        label = f"{layer}/{reason}" if reason else layer
        series.layers[label] += 1
        if not expect(label):
            series.wrong_layer += 1
        series.latencies_ms[request_id] = elapsed_ms

    async def decisions(self) -> dict[str, Mapping[str, Any]]:
        """The gateway's recent decision records, by request id."""
        head = request_head(
            "GET", self.port, f"/admin/decisions?limit={DECISIONS_LIMIT}", ADMIN_KEY
        )
        # A connection of its own each time: one idle between reads would outlive the
        # server's keep-alive timeout.
        admin = HttpConnection(HOST, self.port)
        try:
            response = await admin.request(head, b"")
        finally:
            await admin.close()
        if response.status != 200:
            raise BenchError(f"/admin/decisions answered HTTP {response.status}")
        data = orjson.loads(response.body)["data"]
        return {str(record["request_id"]): record for record in data}

    async def close(self) -> None:
        for connection in self._connections.values():
            await connection.close()


async def _send(connection: HttpConnection, head: bytes, body: bytes) -> tuple[HttpResponse, float]:
    """The answer and its latency in ms (a failed connection reopens on the next send)."""
    started = time.perf_counter()
    async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
        response = await connection.request(head, body)
    return response, (time.perf_counter() - started) * 1000


async def _attach(client: Client, series: Mapping[str, KindSeries]) -> None:
    """Each answered request's record; a request's record is kept just after its answer
    is sent, so the last ones may need another read."""
    deadline = time.monotonic() + RECORD_WAIT_SECONDS
    while True:
        records = await client.decisions()
        missing = 0
        for result in series.values():
            for request_id in result.latencies_ms.keys() - result.records.keys():
                record = records.get(request_id)
                if record is None:
                    missing += 1
                else:
                    result.records[request_id] = record
        if not missing or time.monotonic() > deadline:
            return
        await asyncio.sleep(0.05)


async def interleaved(
    client: Client,
    kinds: Sequence[Kind],
    rounds: int,
    body_for: Callable[[Kind], bytes],
    expect: Callable[[str], bool],
) -> dict[str, KindSeries]:
    """`rounds` rounds of one request per kind, in order; records read back as it goes."""
    series = {kind.name: KindSeries() for kind in kinds}
    per_collect = max(1, COLLECT_EVERY_REQUESTS // max(1, len(kinds)))
    for done in range(1, rounds + 1):
        for kind in kinds:
            await client.call(kind, body_for(kind), series[kind.name], expect)
        if done % per_collect == 0 or done == rounds:
            await _attach(client, series)
    return series


def is_forwarded(label: str) -> bool:
    """A miss, or a bypass because memory was injected (then no lookup ran): both take
    the forwarded path the miss phase measures. Not a miss because a store failed (the
    fail-open path: the numbers would describe the fallback)."""
    if label == STORE_UNAVAILABLE:
        return False
    return label.startswith("miss/") or label in ("miss", "bypass/memory_personalized")


def is_exact_hit(label: str) -> bool:
    return label == "exact"
