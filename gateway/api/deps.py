"""Shared request helpers: the services container, the caller, a bounded body read."""

from __future__ import annotations

from fastapi import Request

from gateway.auth import Principal
from gateway.errors import GatewayError, RequestTooLarge
from gateway.services import Services


def get_services(request: Request) -> Services:
    services: Services | None = getattr(request.app.state, "services", None)
    if services is None:
        raise GatewayError("The gateway is starting up.", status_code=503, code="not_ready")
    return services


def authenticate(request: Request, services: Services) -> Principal:
    return services.keys.authenticate(request.headers.get("authorization"))


def request_id(request: Request) -> str:
    return str(request.state.request_id)


async def read_body(request: Request, max_bytes: int) -> bytes:
    """The body, refusing more than `max_bytes` before reading it all into memory."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise RequestTooLarge(f"The request body exceeds {max_bytes} bytes.")
    received = bytearray()
    async for part in request.stream():
        received += part
        if len(received) > max_bytes:
            raise RequestTooLarge(f"The request body exceeds {max_bytes} bytes.")
    return bytes(received)
