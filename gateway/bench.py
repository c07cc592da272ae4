"""`gateway bench`: cache-hit latency and miss overhead against a local fake upstream.

The fake upstream and the gateway each run in their own process, as in production, so
the load generator, the gateway and the upstream never share an event loop or a GIL.
Everything listens on 127.0.0.1 only; nothing leaves the machine.

Measured, in this order:

1. direct upstream vs gateway miss latency, interleaved request by request (direct,
   gateway, direct, ...) so both series see the same machine noise;
2. exact-hit latency: one primed prompt, then the identical request N times;
3. throughput at concurrency 1 and 16, for exact hits and for misses, each for a few
   seconds (or 25 x N requests, whichever comes first): at N requests a hit run would
   last a tenth of a second, too short for a stable rate.

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
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

from gateway.devtools.threaded_server import free_port

HOST = "127.0.0.1"
MODEL = "bench-model"
TENANT_KEY = "sk-bench"
UPSTREAM_KEY = "sk-fake"
CHAT_PATH = "/v1/chat/completions"
CLIENT_NAME = "raw asyncio HTTP/1.1 client, keep-alive (one connection per worker)"

WARMUP_REQUESTS = 50
HIGH_CONCURRENCY = 16
THROUGHPUT_SECONDS = 3.0
THROUGHPUT_REQUESTS_PER_N = 25
# Caps that keep a pathologically slow gateway from turning the run into an hour.
SEQUENTIAL_PHASE_SECONDS = 25.0
REQUEST_TIMEOUT_SECONDS = 30.0
UPSTREAM_START_SECONDS = 30.0
GATEWAY_START_SECONDS = 90.0
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


def _request_head(method: str, port: int, path: str, api_key: str) -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nhost: {HOST}:{port}\r\n"
        f"content-type: application/json\r\nauthorization: Bearer {api_key}\r\n"
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

    async def connect(self) -> HttpConnection:
        return await HttpConnection(HOST, self.port).open()


def chat_body(prompt: str) -> bytes:
    return orjson.dumps({"model": MODEL, "messages": [{"role": "user", "content": prompt}]})


def unique_bodies(tag: str) -> Callable[[int], bytes]:
    """Request number -> a body no earlier request had: every one is a miss."""
    return lambda index: chat_body(f"bench {tag} miss {index}")


# ------------------------------------------------------------------ measurements


@dataclass(slots=True)
class Series:
    """Latencies of the requests that succeeded, and what went wrong with the others."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    # Answered 200, but `x-gateway-cache` was not the layer the phase is about.
    wrong_layer: int = 0
    first_error: str | None = None

    def fail(self, reason: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = reason


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
    if expect_layer is not None and response.headers.get("x-gateway-cache") != expect_layer:
        series.wrong_layer += 1
    series.latencies_ms.append(elapsed_ms)


async def interleaved_misses(
    direct: Endpoint, gateway: Endpoint, count: int, tag: str
) -> tuple[Series, Series]:
    """Direct and gateway requests alternate, one by one, with the same unique prompts."""
    direct_series, gateway_series = Series(), Series()
    direct_conn, gateway_conn = await direct.connect(), await gateway.connect()
    deadline = time.monotonic() + SEQUENTIAL_PHASE_SECONDS
    try:
        for index in range(count):
            if time.monotonic() > deadline:
                break
            body = chat_body(f"bench {tag} miss {index}")
            await timed_call(direct_conn, direct, body, None, direct_series)
            await timed_call(gateway_conn, gateway, body, "miss", gateway_series)
    finally:
        await direct_conn.close()
        await gateway_conn.close()
    return direct_series, gateway_series


async def repeated_hits(gateway: Endpoint, body: bytes, count: int) -> Series:
    """The identical request `count` times; the caller has primed the cache with it."""
    series = Series()
    connection = await gateway.connect()
    deadline = time.monotonic() + SEQUENTIAL_PHASE_SECONDS
    try:
        for _ in range(count):
            if time.monotonic() > deadline:
                break
            await timed_call(connection, gateway, body, "exact", series)
    finally:
        await connection.close()
    return series


async def prime(gateway: Endpoint, body: bytes) -> None:
    series = Series()
    connection = await gateway.connect()
    try:
        await timed_call(connection, gateway, body, "miss", series)
    finally:
        await connection.close()
    if series.errors or series.wrong_layer:
        raise BenchError(f"priming the exact cache failed: {series.first_error or 'not a miss'}")


@dataclass(slots=True)
class Throughput:
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
    return Throughput(concurrency, seconds, series)


# ----------------------------------------------------------------------- results


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


def _series_summary(series: Series) -> dict[str, Any]:
    return {
        **percentiles(series.latencies_ms),
        "errors": series.errors,
        "wrong_layer": series.wrong_layer,
        "first_error": series.first_error,
    }


def _throughput_summary(result: Throughput) -> dict[str, Any]:
    return {
        "concurrency": result.concurrency,
        "rps": round(result.rps, 1),
        "requests": result.completed,
        "seconds": round(result.seconds, 3),
        "errors": result.series.errors,
        "wrong_layer": result.series.wrong_layer,
        "first_error": result.series.first_error,
        "latency_ms": percentiles(result.series.latencies_ms),
    }


def build_report(
    requests: int,
    direct: Series,
    miss: Series,
    hit: Series,
    rates: Mapping[str, Throughput],
) -> dict[str, Any]:
    direct_stats, miss_stats = percentiles(direct.latencies_ms), percentiles(miss.latencies_ms)
    all_series = [direct, miss, hit, *(r.series for r in rates.values())]
    non_exact_hits = hit.wrong_layer + sum(
        r.series.wrong_layer for name, r in rates.items() if name.startswith("hit")
    )
    non_miss = miss.wrong_layer + sum(
        r.series.wrong_layer for name, r in rates.items() if name.startswith("miss")
    )
    errors = sum(s.errors for s in all_series)
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
            "direct_upstream": _series_summary(direct),
            "gateway_miss": _series_summary(miss),
            "miss_overhead": {
                "p50": _difference(miss_stats["p50"], direct_stats["p50"]),
                "p99": _difference(miss_stats["p99"], direct_stats["p99"]),
                "ratio_p50": _ratio(miss_stats["p50"], direct_stats["p50"]),
                "ratio_p99": _ratio(miss_stats["p99"], direct_stats["p99"]),
            },
        },
        "throughput": {name: _throughput_summary(r) for name, r in rates.items()},
        "errors": errors,
        "non_exact_hits": non_exact_hits,
        "misses_not_reported_as_miss": non_miss,
        "ok": errors == 0 and non_exact_hits == 0 and non_miss == 0,
    }


def _fmt(value: Any, suffix: str = "") -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}{suffix}" if abs(value) < 100 else f"{value:.1f}{suffix}"
    return f"{value}{suffix}"


def render_table(report: Mapping[str, Any]) -> str:
    machine, latency = report["machine"], report["latency_ms"]
    overhead = latency["miss_overhead"]
    lines = [
        "## gateway bench",
        "",
        f"machine: {machine['cpu_count']} CPUs, Python {machine['python']}, {machine['platform']}",
        f"client: {report['client']}; {report['requests']} requests per latency measurement",
        "",
        "| latency (ms)            |      p50 |      p99 |    n | errors |",
        "|-------------------------|---------:|---------:|-----:|-------:|",
    ]
    for label, key in (
        ("exact hit (gateway)", "exact_hit"),
        ("direct upstream", "direct_upstream"),
        ("gateway miss", "gateway_miss"),
    ):
        row = latency[key]
        lines.append(
            f"| {label:<23} | {_fmt(row['p50']):>8} | {_fmt(row['p99']):>8} "
            f"| {row['n']:>4} | {row['errors']:>6} |"
        )
    lines.append(
        f"| {'miss overhead (Δ)':<23} | {_fmt(overhead['p50']):>8} | {_fmt(overhead['p99']):>8} "
        f"|      |        |"
    )
    lines.append(
        f"| {'miss / direct (ratio)':<23} | {_fmt(overhead['ratio_p50'], 'x'):>8} "
        f"| {_fmt(overhead['ratio_p99'], 'x'):>8} |      |        |"
    )
    lines += [
        "",
        "| throughput    | clients |    req/s | requests | seconds | p50 ms | p99 ms | errors |",
        "|---------------|--------:|---------:|---------:|--------:|-------:|-------:|-------:|",
    ]
    for name, row in report["throughput"].items():
        label = "exact hits" if name.startswith("hit") else "misses"
        lines.append(
            f"| {label:<13} | {row['concurrency']:>7} | {row['rps']:>8.1f} "
            f"| {row['requests']:>8} | {row['seconds']:>7.2f} "
            f"| {_fmt(row['latency_ms']['p50']):>6} | {_fmt(row['latency_ms']['p99']):>6} "
            f"| {row['errors']:>6} |"
        )
    lines += [
        "",
        f"errors: {report['errors']}, non-exact hits: {report['non_exact_hits']}, "
        f"misses not reported as miss: {report['misses_not_reported_as_miss']}",
    ]
    if (machine["cpu_count"] or 0) < 4:
        lines.append(
            "note: the client, the gateway and the upstream share these few CPUs; "
            "c=16 throughput is bounded by that, not by the gateway alone."
        )
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


def write_config(workdir: Path, upstream_port: int) -> Path:
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
        "storage": {"backend": "embedded", "path": str(workdir / "data")},
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


async def measure(upstream: Server, gateway_server: Server, requests: int) -> dict[str, Any]:
    await wait_until_ready(
        upstream, "POST", CHAT_PATH, chat_body("readiness probe"), UPSTREAM_START_SECONDS
    )
    _say(f"fake upstream ready on port {upstream.port}; waiting for the gateway")
    await wait_until_ready(gateway_server, "GET", "/readyz", b"", GATEWAY_START_SECONDS)
    _say(f"gateway ready on port {gateway_server.port}")

    direct = Endpoint("upstream", upstream.port, UPSTREAM_KEY)
    gateway = Endpoint("gateway", gateway_server.port, TENANT_KEY)
    run = uuid.uuid4().hex[:8]  # keeps prompts unique even against a reused data dir
    hit_body = chat_body(f"bench {run} the one cached prompt")

    _say(f"warming up ({WARMUP_REQUESTS} requests per path)")
    warm_direct, warm_miss = await interleaved_misses(direct, gateway, WARMUP_REQUESTS, f"{run}w")
    await prime(gateway, hit_body)
    warm_hit = await repeated_hits(gateway, hit_body, WARMUP_REQUESTS)
    for series in (warm_direct, warm_miss, warm_hit):
        if series.errors:
            raise BenchError(f"warm-up failed: {series.first_error}")

    _say(f"latency: {requests} interleaved direct/gateway misses, {requests} exact hits")
    direct_series, miss_series = await interleaved_misses(direct, gateway, requests, run)
    hit_series = await repeated_hits(gateway, hit_body, requests)

    rates: dict[str, Throughput] = {}
    for concurrency in (1, HIGH_CONCURRENCY):
        _say(f"throughput at concurrency {concurrency}")
        cap = requests * THROUGHPUT_REQUESTS_PER_N
        rates[f"hit_c{concurrency}"] = await throughput(
            gateway, concurrency, lambda _: hit_body, "exact", cap
        )
        rates[f"miss_c{concurrency}"] = await throughput(
            gateway, concurrency, unique_bodies(f"{run} c{concurrency}"), "miss", cap
        )
    return build_report(requests, direct_series, miss_series, hit_series, rates)


def _start_servers(workdir: Path) -> tuple[Server, Server]:
    upstream_port = free_port()
    gateway_port = free_port()
    while gateway_port == upstream_port:
        gateway_port = free_port()
    config_path = write_config(workdir, upstream_port)
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


def _finish(report: dict[str, Any], output: str | None) -> int:
    print(render_table(report), flush=True)
    if output:
        Path(output).write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
        _say(f"results written to {output}")
    if report["non_exact_hits"]:
        print(
            f"FAIL: {report['non_exact_hits']} cache hits were not served by the exact cache "
            "(x-gateway-cache != exact)",
            file=sys.stderr,
        )
    if report["errors"] or report["misses_not_reported_as_miss"]:
        print(
            f"FAIL: {report['errors']} request errors, "
            f"{report['misses_not_reported_as_miss']} misses not reported as miss",
            file=sys.stderr,
        )
    return 0 if report["ok"] else 1


def run_benchmark(requests: int, output: str | None) -> int:
    """Run the whole benchmark; 0 if every request succeeded and every hit was exact."""
    if requests < 2:
        print("gateway bench: --requests must be at least 2", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gateway-bench-") as tmp:
        workdir = Path(tmp)
        servers: tuple[Server, ...] = ()
        try:
            servers = _start_servers(workdir)
            report = asyncio.run(measure(*servers, requests))
        except BenchError as exc:
            print(f"gateway bench: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("gateway bench: interrupted", file=sys.stderr)
            return 130
        finally:
            # The gateway first: it holds connections to the upstream.
            for server in reversed(servers):
                stop(server.process)
    return _finish(report, output)
