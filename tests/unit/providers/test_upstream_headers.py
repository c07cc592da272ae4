"""The allow-list of provider headers that reach the client."""

from __future__ import annotations

import httpx

from gateway.providers.headers import passthrough_headers


def test_only_rate_limit_retry_and_request_id_headers_pass() -> None:
    raw = httpx.Headers(
        {
            "Retry-After": "3",
            "retry-after-ms": "2500",
            "x-ratelimit-remaining-tokens": "9000",
            "anthropic-ratelimit-requests-reset": "2026-12-01T00:00:00Z",
            "x-request-id": "req_abc",
            "set-cookie": "session=1",
            "server": "nginx",
            "openai-organization": "org-123",
            "content-type": "application/json",
        }
    )
    assert passthrough_headers(raw) == {
        "retry-after": "3",
        "retry-after-ms": "2500",
        "x-ratelimit-remaining-tokens": "9000",
        "anthropic-ratelimit-requests-reset": "2026-12-01T00:00:00Z",
        # renamed: the gateway's own x-request-id names the gateway's request
        "x-upstream-request-id": "req_abc",
    }


def test_anthropic_style_request_id_and_unsafe_values() -> None:
    assert passthrough_headers({"request-id": "req_1"}) == {"x-upstream-request-id": "req_1"}
    assert passthrough_headers({"x-request-id": "a", "request-id": "b"}) == {
        "x-upstream-request-id": "a"
    }
    # No line breaks, control characters or kilobytes of text are relayed.
    assert passthrough_headers({"retry-after": "1\r\nset-cookie: x"}) == {}
    assert passthrough_headers({"x-ratelimit-limit-requests": "9" * 1000}) == {}
    assert passthrough_headers(None) == {}
