"""The load generator's raw asyncio HTTP/1.1 keep-alive client."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from gateway_tools.bench.constants import CHAT_PATH, HOST


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


def request_head(method: str, port: int, path: str, api_key: str, extra: str = "") -> bytes:
    """Request line and headers; `extra` holds further header lines, each ending in CRLF."""
    return (
        f"{method} {path} HTTP/1.1\r\nhost: {HOST}:{port}\r\n"
        f"content-type: application/json\r\nauthorization: Bearer {api_key}\r\n{extra}"
    ).encode()


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where requests go: the fake upstream directly, or the gateway; chat completions
    unless `path` names another API (`extra_headers`: that API's own header lines)."""

    name: str
    port: int
    api_key: str
    # Keyword-only: subclasses (benchmarks/memory_hits.py) add positional fields.
    path: str = field(default=CHAT_PATH, kw_only=True)
    extra_headers: str = field(default="", kw_only=True)

    @property
    def head(self) -> bytes:
        return request_head("POST", self.port, self.path, self.api_key, self.extra_headers)

    @property
    def no_store_head(self) -> bytes:
        """Looks the cache up but never stores the answer: probes leave no trace."""
        return request_head(
            "POST",
            self.port,
            self.path,
            self.api_key,
            f"{self.extra_headers}cache-control: no-store\r\n",
        )

    async def connect(self) -> HttpConnection:
        return await HttpConnection(HOST, self.port).open()
