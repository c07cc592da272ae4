"""Connection limits of the HTTP server: uvicorn's httptools protocol, plus what it lacks.

uvicorn reads request headers of any size (a 64 MB header was read before
authentication), has no deadline for the headers or the body (a slow-trickle client, or
a `Content-Length` larger than the body, held a connection open forever), and answers
its own concurrency limit in plain text. This protocol adds, per connection:

- a header size limit: more than `max_header_bytes` of request line and headers is a
  431, answered as soon as that much has arrived, before the app (and authentication)
  sees anything;
- a header deadline: a new connection, or a request that has begun, must complete its
  headers within `header_timeout_seconds` (408, then the connection closes);
- a body deadline: the whole body must arrive within `body_timeout_seconds` of the end
  of the headers (408, then the connection closes; the app sees a disconnect);
- a limit on requests in flight in the process: beyond `max_concurrent_requests` a new
  request is a 503 with `retry-after`.

Every refusal is the OpenAI error envelope with `connection: close`. Idle keep-alive
connections are closed by uvicorn's own `timeout_keep_alive`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import httptools
import orjson
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn.server import ServerState

from gateway.errors import GatewayInternalError, error_envelope
from gateway.settings import ServerSettings
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

_RETRY_AFTER_SECONDS = 1


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    max_header_bytes: int
    header_timeout_seconds: float
    body_timeout_seconds: float
    max_concurrent_requests: int

    @classmethod
    def from_settings(cls, server: ServerSettings) -> ConnectionLimits:
        return cls(
            max_header_bytes=server.max_header_bytes,
            header_timeout_seconds=server.header_timeout_seconds,
            body_timeout_seconds=server.body_timeout_seconds,
            max_concurrent_requests=server.max_concurrent_requests,
        )


class _Refusal(GatewayInternalError):
    """Raised from a parser callback: answer `status` and close, the app never runs.
    httptools wraps it in an HttpParserCallbackError, so it is kept on the protocol too."""

    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


def _error_response(
    status: int, message: str, code: str, extra_headers: list[tuple[bytes, bytes]]
) -> bytes:
    error_type = "server_error" if status >= 500 else "invalid_request_error"
    body = orjson.dumps(error_envelope(message, error_type, code))
    head = [STATUS_LINE[status]]
    for name, value in [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"connection", b"close"),
        *extra_headers,
    ]:
        head += [name, b": ", value, b"\r\n"]
    return b"".join([*head, b"\r\n", body])


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits above; `limits` is set on the
    subclass that `protocol_with_limits` makes (uvicorn builds protocols itself)."""

    limits: ConnectionLimits
    # One per server (set with `limits`): under overload, one line a minute, not one a
    # refused request.
    overload_log: ThrottledLogger

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._awaiting_headers = True
        self._header_bytes = 0
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._refused = False
        self._refusal: _Refusal | None = None

    # --- connection ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # A connection that sends nothing is closed too (no response: nothing was asked).
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        self._unset_keepalive_if_required()
        if self._awaiting_headers:
            self._header_bytes += len(data)
            self._arm_header_timer()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            if self._refusal is not None:
                refusal = self._refusal
                self._refuse(refusal.status, refusal.message, refusal.code)
                return
            msg = "Invalid HTTP request received."
            self.logger.warning(msg)
            self.send_400_response(msg)
            return
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        # Still in the headers after this chunk: refuse before buffering any more of them.
        if self._awaiting_headers and self._header_bytes > self.limits.max_header_bytes:
            self._refuse_large_headers()

    # --- parser callbacks ------------------------------------------------------------

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._awaiting_headers = True

    def on_headers_complete(self) -> None:
        self._awaiting_headers = False
        self._cancel_header_timer()
        # What arrived in the last chunk may have finished the headers past the limit.
        size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if size > self.limits.max_header_bytes:
            self._refusal = _Refusal(*self._large_headers())
            raise self._refusal
        if len(self.tasks) >= self.limits.max_concurrent_requests:
            self.overload_log.warning(
                "refused a request: %d requests in flight (server.max_concurrent_requests)",
                len(self.tasks),
            )
            self._refusal = _Refusal(
                503,
                "The gateway is serving as many requests as it is configured to; retry shortly.",
                "too_many_concurrent_requests",
            )
            raise self._refusal
        super().on_headers_complete()
        self._body_timer = self.loop.call_later(
            self.limits.body_timeout_seconds, self._body_timed_out
        )

    def on_message_complete(self) -> None:
        self._cancel_body_timer()
        # The next request's headers are due next; its first byte starts their deadline.
        self._awaiting_headers = True
        self._header_bytes = 0
        super().on_message_complete()

    # --- timers ------------------------------------------------------------------------

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(
                self.limits.header_timeout_seconds, self._headers_timed_out
            )

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _cancel_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _cancel_timers(self) -> None:
        self._cancel_header_timer()
        self._cancel_body_timer()

    def _headers_timed_out(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        if self._header_bytes == 0:
            self.transport.close()  # nothing was asked: nothing to answer
            return
        self._refuse(
            408,
            f"The request headers did not arrive within {self.limits.header_timeout_seconds:g} "
            "seconds.",
            "header_timeout",
        )

    def _body_timed_out(self) -> None:
        self._body_timer = None
        cycle = self.cycle
        if self.transport.is_closing() or cycle is None:
            return
        if cycle.response_started:
            # Answered without the whole body (a 401, a 413): the rest is not awaited.
            self.transport.close()
            return
        # The app's next receive() is a disconnect and whatever it sends is dropped; the
        # client gets the 408 written here.
        cycle.disconnected = True
        cycle.message_event.set()
        state = cycle.scope.get("state") or {}
        request_id = state.get("request_id")
        extra = [(b"x-request-id", request_id.encode("ascii"))] if request_id else []
        self._refuse(
            408,
            f"The request body did not arrive within {self.limits.body_timeout_seconds:g} seconds.",
            "body_timeout",
            extra,
        )

    # --- refusals ----------------------------------------------------------------------

    def _large_headers(self) -> tuple[int, str, str]:
        return (
            431,
            f"The request headers exceed {self.limits.max_header_bytes} bytes.",
            "headers_too_large",
        )

    def _refuse_large_headers(self) -> None:
        self._refuse(*self._large_headers())

    def _refuse(
        self,
        status: int,
        message: str,
        code: str,
        extra_headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        self._refused = True
        self._cancel_timers()
        headers = list(extra_headers or [])
        if status == 503:
            headers.append((b"retry-after", str(_RETRY_AFTER_SECONDS).encode("ascii")))
        if not self.transport.is_closing():
            self.transport.write(_error_response(status, message, code, headers))
            self.transport.close()


def protocol_with_limits(limits: ConnectionLimits) -> type[LimitedHttpToolsProtocol]:
    """A protocol class for `uvicorn.Config(http=...)` that enforces `limits`."""

    class GatewayHttpProtocol(LimitedHttpToolsProtocol):
        pass

    GatewayHttpProtocol.limits = limits
    GatewayHttpProtocol.overload_log = ThrottledLogger(logger, interval_seconds=60.0)
    return GatewayHttpProtocol


def uvicorn_limit_options(server: ServerSettings) -> dict[str, Any]:
    """The keyword arguments of `uvicorn.run` / `uvicorn.Config` that apply the limits."""
    return {
        "http": protocol_with_limits(ConnectionLimits.from_settings(server)),
        "timeout_keep_alive": server.keep_alive_timeout_seconds,
    }
