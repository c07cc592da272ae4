"""Exception handlers: every error leaves in OpenAI's envelope (Anthropic's on the
Anthropic routes, `anthropic_errors.py`), never as a trace."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from gateway.api.anthropic_errors import anthropic_envelope, speaks_anthropic
from gateway.api.endpoints import not_found_message
from gateway.api.responses import json_response
from gateway.errors import GatewayError, error_envelope

logger = logging.getLogger(__name__)


def _request_id(request: Request) -> str:
    return str(getattr(request.state, "request_id", "-"))


def _error_response(
    request: Request,
    envelope: dict[str, Any],
    status: int,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """`envelope` (OpenAI's), or the same message in Anthropic's on its routes."""
    if speaks_anthropic(request.url.path):
        message = str(envelope["error"]["message"])
        envelope = anthropic_envelope(message, status, getattr(request.state, "request_id", None))
    return json_response(envelope, status=status, headers=headers)


async def _gateway_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GatewayError)
    if exc.status_code >= 500:
        logger.warning(
            "request %s failed: %s (%s)", _request_id(request), exc.code, exc.status_code
        )
    return _error_response(request, exc.envelope(), exc.status_code, exc.headers or None)


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    location = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
    message = f"{location}: {first['msg']}" if location else str(first["msg"])
    return _error_response(
        request,
        error_envelope(message, "invalid_request_error", "invalid_request", location or None),
        400,
    )


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    message = str(exc.detail)
    if exc.status_code == 404:
        # No route: say what the gateway serves (and that OpenAI routes it does not
        # implement are not passed through).
        message, code = not_found_message(request.method, request.url.path, request.app.routes)
    return _error_response(
        request,
        error_envelope(message, "invalid_request_error", code),
        exc.status_code,
        exc.headers,
    )


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    # Type only: exception text may quote request content.
    logger.error("request %s: unexpected %s", _request_id(request), type(exc).__name__)
    return _error_response(
        request,
        error_envelope(
            "The gateway failed to handle this request.", "server_error", "internal_error"
        ),
        500,
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(GatewayError, _gateway_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)
