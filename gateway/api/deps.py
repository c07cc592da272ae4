"""Shared request helpers: the services dependency, the caller, a bounded body read."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import Depends, Request
from starlette.requests import ClientDisconnect

from gateway.api.schemas import ModelT
from gateway.auth import KEY_HEADERS, Principal
from gateway.errors import ClientClosed, GatewayError, InvalidRequest, RequestTooLarge
from gateway.wiring import Services

logger = logging.getLogger(__name__)


async def get_services(request: Request) -> Services:
    """The FastAPI dependency every route takes its services from (the ones the lifespan
    built); `app.dependency_overrides[get_services]` replaces them. `async` on purpose:
    FastAPI runs a plain `def` dependency in its thread pool, a thread hop per request
    that cost exact hits ~27 % of their throughput (`benchmarks/load.py`, c=16)."""
    services: Services | None = getattr(request.app.state, "services", None)
    if services is None:
        raise GatewayError("The gateway is starting up.", status_code=503, code="not_ready")
    return services


AppServices = Annotated[Services, Depends(get_services)]


async def authenticate(request: Request, services: Services) -> Principal:
    """The caller: a config key (in memory), else a runtime key (remembered, or read
    from the key store once)."""
    headers = request.headers
    return await services.keys.resolve(
        headers.get("authorization"), *(headers.get(name) for name in KEY_HEADERS)
    )


async def authenticated_body(
    request: Request, services: Services, schema: type[ModelT]
) -> tuple[Principal, dict[str, Any], ModelT]:
    """What every door does first: the caller, then its body read within the size limit
    and validated against `schema` (a large one in a worker thread)."""
    principal = await authenticate(request, services)
    raw = await read_body(request, services.config.server.max_request_bytes)
    body, parsed = await services.body_parser.parse(raw, schema)
    return principal, body, parsed


def request_id(request: Request) -> str:
    return str(request.state.request_id)


# Longer than any integer a query parameter or header needs (and far below the 4,300
# digits at which int() refuses a string).
_MAX_INT_DIGITS = 18


def query_int(raw: str | None) -> int | None:
    """A non-negative decimal integer in ASCII digits, or None: `str.isdigit` alone
    also accepts '²' and '١', which int() refuses or reads."""
    if raw is None or not raw.isascii() or not raw.isdigit():
        return None
    digits = raw.lstrip("0") or "0"
    return int(digits) if len(digits) <= _MAX_INT_DIGITS else None


def bounded_int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """Query parameter `name` as an integer in [low, high]; 400 naming it otherwise."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    value = query_int(raw)
    if value is None or not low <= value <= high:
        raise InvalidRequest(f"'{name}' must be an integer from {low} to {high}.", param=name)
    return value


async def read_body(request: Request, max_bytes: int) -> bytes:
    """The body, refusing more than `max_bytes` before reading it all into memory."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit():
        size = query_int(declared)
        if size is None or size > max_bytes:  # None: more digits than any real size
            raise RequestTooLarge(f"The request body exceeds {max_bytes} bytes.")
    received = bytearray()
    try:
        async for part in request.stream():
            received += part
            if len(received) > max_bytes:
                raise RequestTooLarge(f"The request body exceeds {max_bytes} bytes.")
    except ClientDisconnect:
        # The client's doing (or the server's body timeout): not an error of the gateway.
        logger.info("request %s: the client left before its body arrived", request_id(request))
        raise ClientClosed("The client closed the connection before sending its body.") from None
    return bytes(received)
