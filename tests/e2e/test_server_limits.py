"""The HTTP server's limits, against the real `gateway serve` with slow raw-socket clients:
headers that trickle or never end, a body shorter than its Content-Length, idle
keep-alive connections, headers too large (refused before authentication) and more
requests in flight than configured. Timeouts are short here; the bounds the tests wait
are generous: they check that a connection closed at all, not how fast."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.e2e.helpers import GatewayProcess, unique_prompt
from tests.helpers import TENANT_KEYS, FakeUpstream, gateway_config_dict

HEADER_TIMEOUT_SECONDS = 1.0
BODY_TIMEOUT_SECONDS = 1.0
KEEP_ALIVE_TIMEOUT_SECONDS = 1
MAX_CONCURRENT_REQUESTS = 3
# Far beyond every timeout above: a connection still open by then was never closed.
CLOSED_WITHIN_SECONDS = 20.0
CHAT = "/v1/chat/completions"


@pytest.fixture(scope="module")
def served(upstream: FakeUpstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """One `gateway serve` process for the module (start-up takes seconds); its port."""
    folder = tmp_path_factory.mktemp("server-limits")
    config = gateway_config_dict(upstream.url, folder / "data")
    config["router_settings"] = {"num_retries": 0, "timeout_seconds": 30.0}
    config["server"] = {
        "gc_freeze": False,
        "header_timeout_seconds": HEADER_TIMEOUT_SECONDS,
        "body_timeout_seconds": BODY_TIMEOUT_SECONDS,
        "keep_alive_timeout_seconds": KEEP_ALIVE_TIMEOUT_SECONDS,
        "max_concurrent_requests": MAX_CONCURRENT_REQUESTS,
        # max_header_bytes: the default (32 KiB)
    }
    config_path = folder / "gateway.yaml"
    config_path.write_text(yaml.safe_dump(config))
    process = GatewayProcess(config_path, folder / "gateway.log")
    yield process.port
    process.stop()


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=CLOSED_WITHIN_SECONDS)
    return sock


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a timeout fails)."""
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return received
        except TimeoutError:
            raise AssertionError(
                f"still open after {CLOSED_WITHIN_SECONDS} s; got {received[:200]!r}"
            ) from None
        if not chunk:
            return received
        received += chunk


def _status_and_error(response: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = response.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"connection: close" in head.lower(), head
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    return status, error


def _chat_head(content_length: int, key: str = TENANT_KEYS["acme"]) -> bytes:
    return (
        f"POST {CHAT} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {key}\r\n"
        f"content-type: application/json\r\ncontent-length: {content_length}\r\n\r\n"
    ).encode()


def _chat_body(marker: str = "") -> bytes:
    prompt = unique_prompt("Name a mountain.") + marker
    return json.dumps(
        {"model": "fake-model", "messages": [{"role": "user", "content": prompt}]}
    ).encode()


def test_ordinary_requests_are_served(served: int) -> None:
    response = httpx.post(
        f"http://127.0.0.1:{served}{CHAT}",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        content=_chat_body(),
        timeout=30,
    )
    assert response.status_code == 200, response.text


def test_trickling_headers_are_cut_off(served: int) -> None:
    """Many slow-trickle clients, each sending a header byte now and then: every
    connection ends with a 408 (they stayed open indefinitely before)."""
    sockets = [_connect(served) for _ in range(20)]
    try:
        for sock in sockets:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nx-slow: ")
        closed: dict[int, bytes] = {}
        deadline = time.monotonic() + CLOSED_WITHIN_SECONDS
        while len(closed) < len(sockets) and time.monotonic() < deadline:
            for index, sock in enumerate(sockets):
                if index in closed:
                    continue
                try:
                    sock.sendall(b"a")
                except OSError:
                    closed[index] = _read_until_closed(sock)
                    continue
                sock.settimeout(0.01)
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:
                    continue
                except ConnectionResetError:
                    chunk = b""
                sock.settimeout(CLOSED_WITHIN_SECONDS)
                closed[index] = chunk + (_read_until_closed(sock) if chunk else b"")
            time.sleep(0.1)
        assert len(closed) == len(sockets), f"{len(sockets) - len(closed)} connections still open"
        answered = [response for response in closed.values() if response]
        assert answered, "no connection got an answer"
        for response in answered:
            status, error = _status_and_error(response)
            assert (status, error["code"]) == (408, "header_timeout")
    finally:
        for sock in sockets:
            sock.close()


def test_a_connection_that_sends_nothing_is_closed(served: int) -> None:
    with _connect(served) as sock:
        assert _read_until_closed(sock) == b""


def test_a_body_shorter_than_its_content_length_is_408(served: int) -> None:
    body = _chat_body()
    with _connect(served) as sock:
        sock.sendall(_chat_head(len(body) + 100) + body)
        status, error = _status_and_error(_read_until_closed(sock))
    assert (status, error["code"]) == (408, "body_timeout")


def test_a_trickling_body_is_408(served: int) -> None:
    body = _chat_body()
    with _connect(served) as sock:
        sock.sendall(_chat_head(len(body)))
        response = b""
        for byte in body:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            sock.settimeout(0.2)
            try:
                response = sock.recv(65536)
            except TimeoutError:
                continue
            finally:
                sock.settimeout(CLOSED_WITHIN_SECONDS)
            break
        response += _read_until_closed(sock)
    status, error = _status_and_error(response)
    assert (status, error["code"]) == (408, "body_timeout")


def test_an_idle_keep_alive_connection_is_closed(served: int) -> None:
    body = _chat_body()
    with _connect(served) as sock:
        sock.sendall(_chat_head(len(body)) + body)
        sock.settimeout(CLOSED_WITHIN_SECONDS)
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first[:200]
        assert b"connection: close" not in first.lower()
        _read_until_closed(sock)  # returns once the server closes the idle connection


@pytest.mark.parametrize("key", ["no key", TENANT_KEYS["acme"]])
def test_headers_over_the_limit_are_431_before_authentication(served: int, key: str) -> None:
    """64 KiB of one header (the default limit is 32 KiB): refused as soon as it is over
    the limit, before the key is looked at (a 64 MB header was read in full before)."""
    head = (
        f"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {key}\r\n"
        f"x-padding: {'p' * (64 * 1024)}\r\n\r\n"
    ).encode()
    with _connect(served) as sock:
        # Refused while still sending, perhaps: what came back is read below.
        with contextlib.suppress(OSError):
            sock.sendall(head)
        response = _read_until_closed(sock)
    assert response, "closed without an answer"
    status, error = _status_and_error(response)
    assert (status, error["code"]) == (431, "headers_too_large")


def test_a_huge_header_is_refused_without_reading_it(served: int) -> None:
    """Megabytes of header: the server stops reading after the limit."""
    with _connect(served) as sock:
        sock.sendall(b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nx-padding: ")
        sent = 0
        chunk = b"p" * 65536
        refused = False
        while sent < 64 * 1024 * 1024:
            try:
                sock.sendall(chunk)
            except OSError:
                refused = True
                break
            sent += len(chunk)
        assert refused, "64 MiB of header were accepted"


def test_requests_beyond_the_concurrency_limit_are_503(served: int) -> None:
    """Requests in flight (here: waiting on a slow provider) fill the limit; the next is
    a 503 with retry-after, and requests are served again once they are done."""
    holders = [_connect(served) for _ in range(MAX_CONCURRENT_REQUESTS)]
    try:
        for sock in holders:
            body = _chat_body(" [[sleep:5]]")
            sock.sendall(_chat_head(len(body)) + body)
        time.sleep(1.0)  # each is in flight: the provider takes 5 s to answer
        with _connect(served) as sock:
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            response = _read_until_closed(sock)
        status, error = _status_and_error(response)
        assert (status, error["code"]) == (503, "too_many_concurrent_requests")
        assert b"retry-after:" in response.lower()
    finally:
        for sock in holders:
            sock.close()
    # The holders' requests end: served again.
    deadline = time.monotonic() + CLOSED_WITHIN_SECONDS
    while True:
        response = httpx.get(f"http://127.0.0.1:{served}/healthz", timeout=10)
        if response.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert response.status_code == 200


def test_the_limits_are_validated(tmp_path: Path, upstream: FakeUpstream) -> None:
    from gateway.settings import ConfigError, parse_config

    for name, value in (
        ("max_header_bytes", 10),
        ("header_timeout_seconds", 0),
        ("body_timeout_seconds", -1),
        ("keep_alive_timeout_seconds", 0),
        ("max_concurrent_requests", 0),
    ):
        raw = gateway_config_dict(upstream.url, tmp_path, server={name: value})
        with pytest.raises(ConfigError, match=f"server.{name}"):
            parse_config(raw)
