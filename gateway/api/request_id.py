"""Pure ASGI middleware: give every request an id and echo it as `x-request-id`.

It is also where an unexpected exception ends: Starlette hands those to its outermost
middleware, outside this one, which answers without the id and then re-raises for the
server to log a full traceback (whose text may quote the request). Here the client gets
the 500 envelope with its id, and the log one line with the exception's type.
"""

from __future__ import annotations

import logging
import os
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.api.responses import json_response
from gateway.errors import error_envelope
from gateway.telemetry.logs import bind_request_id, reset_request_id

logger = logging.getLogger(__name__)

REQUEST_ID_HEADER = b"x-request-id"
# A client-supplied id is kept only if it is short and plain (it reaches the logs).
_SAFE_ID = re.compile(rb"^[A-Za-z0-9._:-]{1,128}$")


class RequestIdMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        supplied = next(
            (value for name, value in scope["headers"] if name == REQUEST_ID_HEADER), None
        )
        request_id = (
            supplied.decode("ascii")
            if supplied is not None and _SAFE_ID.match(supplied)
            else f"req_{os.urandom(16).hex()}"  # as uuid4().hex, without a UUID object
        )
        scope.setdefault("state", {})["request_id"] = request_id
        encoded = request_id.encode("ascii")

        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", []), (REQUEST_ID_HEADER, encoded)]
            await send(message)

        # Every log line written while this request is served carries its id.
        token = bind_request_id(request_id)
        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            # Type only: exception text may quote request content.
            logger.error("request %s: unexpected %s", request_id, type(exc).__name__)
            if not started:
                response = json_response(
                    error_envelope(
                        "The gateway failed to handle this request.",
                        "server_error",
                        "internal_error",
                    ),
                    status=500,
                )
                await response(scope, receive, send_with_id)
            # Else the answer is cut short: the server closes the connection.
        finally:
            reset_request_id(token)
