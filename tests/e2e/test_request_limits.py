"""Message and content-part counts are limited (`server.max_messages`,
`server.max_content_parts`): over the limit is a 400 in the envelope, before any
upstream call; large bodies within the limits are answered as before."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from tests.e2e.helpers import unique_prompt
from tests.helpers import TENANT_KEYS, FakeUpstream, GatewayFactory

CHAT = "/v1/chat/completions"
HEADERS = {"authorization": f"Bearer {TENANT_KEYS['acme']}", "content-type": "application/json"}


def _post(client: httpx.Client, messages: list[dict[str, Any]]) -> httpx.Response:
    body = orjson.dumps({"model": "fake-model", "messages": messages})
    return client.post(CHAT, headers=HEADERS, content=body)


def _assert_count_refusal(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text[:300]
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    assert error["param"] == "messages"
    assert error["code"] == "array_above_max_length"


def test_configured_count_limits(start_gateway: GatewayFactory, upstream: FakeUpstream) -> None:
    gateway = start_gateway(
        server={"gc_freeze": False, "max_messages": 50, "max_content_parts": 20}
    )
    calls_before = len(upstream.log.chat_bodies)
    with httpx.Client(base_url=gateway.url, timeout=60) as client:
        turns = [{"role": "user", "content": f"turn {i}"} for i in range(50)]
        _assert_count_refusal(_post(client, [*turns, {"role": "user", "content": "one more"}]))
        parts = [{"type": "text", "text": f"part {i}"} for i in range(21)]
        _assert_count_refusal(_post(client, [{"role": "user", "content": parts}]))
        assert len(upstream.log.chat_bodies) == calls_before, "a refused body reached upstream"
        prompt = unique_prompt("Summarise these turns.")
        answered = _post(client, [*turns[:49], {"role": "user", "content": prompt}])
        assert answered.status_code == 200, answered.text[:300]
        answered = _post(client, [{"role": "user", "content": parts[:20]}])
        assert answered.status_code == 200, answered.text[:300]


def test_the_noisy_body_is_refused_by_default_and_large_bodies_are_answered(
    start_gateway: GatewayFactory,
) -> None:
    """The 3 MB body of 60,000 messages from the issue is a 400 with the defaults
    (10,000 messages); a 3 MB body within the limits, parsed in a worker thread, is
    answered."""
    gateway = start_gateway()
    with httpx.Client(base_url=gateway.url, timeout=120) as client:
        noisy = [{"role": "user", "content": f"message {i} xxxxxxx"} for i in range(60_000)]
        _assert_count_refusal(_post(client, noisy))
        prompt = unique_prompt("Summarise this document.")
        large = [{"role": "user", "content": prompt + " " + "lorem ipsum " * 250_000}]
        answered = _post(client, large)
        assert answered.status_code == 200, answered.text[:300]
