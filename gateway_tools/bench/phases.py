"""Priming and closed-loop phases, on the raw HTTP/1.1 client of `gateway_tools.bench`.

That client costs ~0.04 ms of CPU per request (httpx ~0.45 ms): on a 2-core machine
the client's CPU is taken from the servers, so it must be as small as possible, and it
is the same for every target.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gateway_tools.bench.constants import HOST, REQUEST_TIMEOUT_SECONDS, BenchError
from gateway_tools.bench.formatting import fmt_counts, ranked_counts
from gateway_tools.bench.http_client import REQUEST_FAILURES, HttpConnection, HttpResponse
from gateway_tools.bench.prompts import Request
from gateway_tools.bench.targets import Target

PRIME_CONCURRENCY = 8
# How long priming may take in all, and how long a store gets to finish (stores run in
# the background, after the answer) before the check.
PRIME_SECONDS = 30.0
STORE_SETTLE_SECONDS = 0.2


@dataclass(slots=True)
class PhaseStats:
    """What one phase's requests got: latencies of the 200s, failures, layers."""

    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str | None = None
    # Answered 200 from a layer its kind of request must not come from.
    unexpected: int = 0
    first_unexpected: str | None = None
    # "kind/layer" of every 200, and "kind/layer/reason" where the gateway gave a reason.
    answers: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)

    @property
    def completed(self) -> int:
        return len(self.latencies_ms)

    @property
    def rps(self) -> float:
        return self.completed / self.seconds if self.seconds > 0 else 0.0

    def fail(self, why: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = why


async def send(connection: HttpConnection, head: bytes, body: bytes) -> HttpResponse | str:
    """The answer, or why there is none (a failed request never stops a phase)."""
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
            return await connection.request(head, body)
    except REQUEST_FAILURES as exc:
        return f"{type(exc).__name__}: {exc}"


def record(
    stats: PhaseStats,
    target: Target,
    workload: str,
    kind: str,
    answer: HttpResponse | str,
    elapsed_ms: float,
) -> None:
    if isinstance(answer, str):
        stats.fail(answer)
        return
    if answer.status != 200:
        stats.fail(f"HTTP {answer.status}: {answer.body[:200]!r}")
        return
    stats.latencies_ms.append(elapsed_ms)
    layer = target.layer_of(answer.headers)
    stats.answers[f"{kind}/{layer}"] += 1
    reason = answer.headers.get("x-gateway-cache-reason")
    if reason is not None:
        stats.reasons[f"{kind}/{layer}/{reason}"] += 1
    allowed = target.allowed_layers(workload, kind)
    if allowed is not None and layer not in allowed:
        stats.unexpected += 1
        if stats.first_unexpected is None:
            stats.first_unexpected = f"{kind} answered from {layer} (reason {reason})"


async def closed_loop(
    target: Target,
    workload: str,
    next_request: Callable[[], Request],
    concurrency: int,
    seconds: float,
) -> PhaseStats:
    """`concurrency` workers, each on its own keep-alive connection, each sending its
    next request as soon as the last one is answered, for `seconds`."""
    endpoint = target.endpoint
    head = endpoint.head
    stats = PhaseStats()
    # Connections are opened before the clock starts: set-up is not what is measured.
    connections = [await endpoint.connect() for _ in range(concurrency)]
    deadline = time.monotonic() + seconds

    async def worker(connection: HttpConnection) -> None:
        while time.monotonic() < deadline:
            kind, body = next_request()
            started = time.perf_counter()
            answer = await send(connection, head, body)
            elapsed_ms = (time.perf_counter() - started) * 1000
            record(stats, target, workload, kind, answer, elapsed_ms)

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(c) for c in connections))
    finally:
        stats.seconds = time.perf_counter() - started
        await asyncio.gather(*(c.close() for c in connections))
    return stats


async def fan_out(
    target: Target, head: bytes, bodies: Sequence[bytes], concurrency: int
) -> list[HttpResponse | str]:
    """Every body once, `concurrency` at a time; the answers in the order of `bodies`."""
    answers: list[HttpResponse | str] = ["not sent"] * len(bodies)
    position = 0

    async def worker() -> None:
        nonlocal position
        connection = HttpConnection(HOST, target.server.port)
        try:
            while position < len(bodies):
                index = position
                position += 1
                answers[index] = await send(connection, head, bodies[index])
        finally:
            await connection.close()

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(bodies)))))
    return answers


def _describe(target: Target, answer: HttpResponse | str) -> str:
    if isinstance(answer, str):
        return answer
    reason = answer.headers.get("x-gateway-cache-reason")
    return f"HTTP {answer.status}, layer {target.layer_of(answer.headers)}, reason {reason}"


async def prime(target: Target, bodies: Sequence[bytes]) -> None:
    """Send every body, then check that each is served from the exact cache; send again
    those that are not, until `PRIME_SECONDS` have passed.

    Sending again retries a store that failed (a Redis operation that timed out on a
    loaded machine): the answer is sent before it is stored, so a failed store goes
    unseen. It cannot hide a question that is too close to another primed one: the
    gateway answers it from the semantic cache and never stores it, so it stays pending
    and fails the run (the workload would not be what its label says)."""
    pending = list(bodies)
    deadline = time.monotonic() + PRIME_SECONDS
    last: Counter[str] = Counter()
    while pending and time.monotonic() < deadline:
        sent = await fan_out(target, target.endpoint.head, pending, PRIME_CONCURRENCY)
        failed = [a for a in sent if isinstance(a, str) or a.status != 200]
        if failed:
            raise BenchError(
                f"{target.name}: priming failed for {len(failed)} of {len(pending)} questions "
                f"(first: {_describe(target, failed[0])})"
            )
        await asyncio.sleep(STORE_SETTLE_SECONDS)
        answers = await fan_out(target, target.probe_head, pending, PRIME_CONCURRENCY)
        last = Counter(_describe(target, a) for a in answers)
        pending = [
            body
            for body, answer in zip(pending, answers, strict=True)
            if isinstance(answer, str)
            or answer.status != 200
            or target.layer_of(answer.headers) != target.exact_layer
        ]
    if pending:
        raise BenchError(
            f"{target.name}: {len(pending)} of {len(bodies)} primed questions are not served "
            f"from the {target.exact_layer} cache after {PRIME_SECONDS:.0f} s "
            f"(answers: {fmt_counts(ranked_counts(last))})"
        )
