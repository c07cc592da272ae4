"""Pure ASGI middleware: give every request an id and echo it as `x-request-id`."""

from __future__ import annotations

import re
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.telemetry.logs import bind_request_id, reset_request_id

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
            else f"req_{uuid.uuid4().hex}"
        )
        scope.setdefault("state", {})["request_id"] = request_id
        encoded = request_id.encode("ascii")

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (REQUEST_ID_HEADER, encoded)]
            await send(message)

        # Every log line written while this request is served carries its id.
        token = bind_request_id(request_id)
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            reset_request_id(token)
