"""What every error answer of the gateway must hold, checked the same way by every test:
the envelope `{"error": {"message", "type", "param", "code"}}`, an `x-request-id`, no
traceback and no upstream key; and what the gateway logged as an unexpected exception."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

# The HTTP server's own plain-text 400 (malformed request lines and headers never reach
# the gateway): the only answer that is not the envelope.
UVICORN_REJECT = "Invalid HTTP request received."
LEAKS = ("Traceback", 'File "', "sk-upstream-secret")
ENVELOPE_FIELDS = {"message", "type", "param", "code"}


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The envelope's `error`, after checking everything every error answer must hold."""
    assert response.headers.get("x-request-id"), "no x-request-id"
    for leak in LEAKS:
        assert leak not in response.text, f"{leak!r} in the body"
    assert response.headers.get("content-type", "").startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == ENVELOPE_FIELDS, error
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["type"], str) and error["type"]
    assert error["code"] is None or isinstance(error["code"], str)
    assert error["param"] is None or isinstance(error["param"], str)
    return dict(error)


def unexpected_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the gateway logged as an unexpected exception: also those raised after the
    answer started (a stream, a background cache write), which no status shows."""
    return [
        record.getMessage()
        for record in caplog.records
        if record.name.startswith("gateway.api") and "unexpected" in record.getMessage()
    ]
