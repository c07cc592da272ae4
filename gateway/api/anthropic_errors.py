"""Anthropic's error envelope, for the routes that speak Anthropic's API.

`{"type": "error", "error": {"type", "message"}, "request_id"}` with Anthropic's error
types, chosen by status: the Anthropic SDK reads the status for its exception class and
`error.type` / `error.message` for the text. Other routes keep OpenAI's envelope.
"""

from __future__ import annotations

from typing import Any

# The routes answered in Anthropic's envelope (errors included: a 404 or 405 on them).
ANTHROPIC_PATH = "/v1/messages"

_TYPES_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    # Anthropic's billing error: a tenant's spend budget is used up (gateway/spend/).
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    # Anthropic's "overloaded": the gateway starting up or a store it needs unavailable.
    503: "overloaded_error",
    529: "overloaded_error",
}


def speaks_anthropic(path: str) -> bool:
    return path == ANTHROPIC_PATH or path.startswith(ANTHROPIC_PATH + "/")


def anthropic_error_type(status: int) -> str:
    if status in _TYPES_BY_STATUS:
        return _TYPES_BY_STATUS[status]
    # Other client errors (405, 409, 422, 499) are the request's; the rest the server's.
    return "invalid_request_error" if 400 <= status < 500 else "api_error"


def anthropic_envelope(message: str, status: int, request_id: str | None = None) -> dict[str, Any]:
    envelope: dict[str, Any] = {
        "type": "error",
        "error": {"type": anthropic_error_type(status), "message": message},
    }
    if request_id is not None:
        envelope["request_id"] = request_id
    return envelope
