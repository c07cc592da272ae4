"""Per-request cache controls over HTTP with the openai client (issue 15, item 12):
`Cache-Control: max-age=N` accepts only entries at most N seconds old, in both layers;
`x-gateway-cache-ttl: N` sets how long the answer's entries live, bounded by the policy.
The sleeps age entries past a TTL of one second; nothing is asserted about speed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.e2e.helpers import client_for, gateway_with_policies, unique_prompt, upstream_calls
from tests.helpers import TENANT_KEYS, FakeUpstream, GatewayFactory, RunningGateway

SYSTEM = {"role": "system", "content": "You are a concise programming tutor."}


def _ask(gateway: RunningGateway, text: str, **headers: str) -> tuple[Any, str]:
    """`headers` by their Python names: `cache_control` is sent as `cache-control`."""
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[SYSTEM, {"role": "user", "content": text}],
        extra_headers={name.replace("_", "-"): value for name, value in headers.items()},
    )
    return raw.headers, raw.parse().choices[0].message.content


def test_max_age_serves_only_entries_young_enough(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt()
    _, first = _ask(gateway, prompt)
    headers, served = _ask(gateway, prompt, cache_control="max-age=3600")
    assert headers["x-gateway-cache"] == "exact" and served == first
    assert 0 <= int(headers["age"]) <= 3600

    # The entry is older than 0 seconds: not served, and the reason says why.
    headers, fresh = _ask(gateway, prompt, cache_control="max-age=0")
    assert headers["x-gateway-cache"] == "miss"
    assert headers["x-gateway-cache-reason"] == "older_than_max_age"
    assert fresh != first
    assert upstream_calls(upstream, prompt) == 2


def test_max_age_applies_to_semantic_hits(gateway: RunningGateway) -> None:
    _, first = _ask(gateway, "How do I sort a list in Python?")
    headers, served = _ask(gateway, "How can I sort a list in Python?", cache_control="max-age=60")
    assert headers["x-gateway-cache"] == "semantic" and served == first
    headers, fresh = _ask(gateway, "How can I sort a list in Python?", cache_control="max-age=0")
    assert headers["x-gateway-cache"] == "miss"
    assert headers["x-gateway-cache-reason"] == "older_than_max_age"
    assert fresh != first


def test_a_requested_ttl_expires_the_entry_in_both_layers(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    short, long = unique_prompt(), unique_prompt()
    _ask(gateway, short, x_gateway_cache_ttl="1")
    _ask(gateway, long, x_gateway_cache_ttl="3600")
    time.sleep(2.2)
    headers, _ = _ask(gateway, short)
    # Expired in the exact cache and in the semantic cache (which would otherwise serve
    # the same ask at full similarity).
    assert headers["x-gateway-cache"] == "miss"
    headers, _ = _ask(gateway, long)
    assert headers["x-gateway-cache"] == "exact"
    assert upstream_calls(upstream, short) == 2 and upstream_calls(upstream, long) == 1


@pytest.mark.parametrize(
    ("policy", "layer"),
    [
        # The policy's TTL bounds the request's: 3600 asked, one second kept.
        ("", "miss"),
        # An operator allows longer TTLs than the layers' own.
        ("cache_control:\n  max_ttl_seconds: 3600\n", "exact"),
    ],
)
def test_the_requested_ttl_is_bounded_by_the_policy(
    start_gateway: GatewayFactory, tmp_path: Path, policy: str, layer: str
) -> None:
    text = "exact_cache:\n  ttl_seconds: 1\nsemantic_cache:\n  ttl_seconds: 1\n" + policy
    gateway, _ = gateway_with_policies(start_gateway, tmp_path, {"default.yaml": text})
    prompt = unique_prompt()
    _ask(gateway, prompt, x_gateway_cache_ttl="3600")
    time.sleep(2.2)
    headers, _ = _ask(gateway, prompt)
    assert headers["x-gateway-cache"] == layer


@pytest.mark.parametrize("value", ["0", "-5", "1.5", "soon", "99999999999", ""])
def test_a_bad_ttl_header_is_a_clear_400(gateway: RunningGateway, value: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        _ask(gateway, unique_prompt(), x_gateway_cache_ttl=value)
    error = caught.value.body
    assert isinstance(error, dict)
    assert error["param"] == "x-gateway-cache-ttl" and error["code"] == "invalid_cache_ttl"
    assert error["type"] == "invalid_request_error"


def test_cache_control_garbage_is_ignored(gateway: RunningGateway) -> None:
    prompt = unique_prompt()
    _ask(gateway, prompt)
    response = httpx.post(
        f"{gateway.base_url}/chat/completions",
        json={"model": "fake-model", "messages": [SYSTEM, {"role": "user", "content": prompt}]},
        headers={
            "authorization": f"Bearer {TENANT_KEYS['acme']}",
            "cache-control": "max-age=soon, max-age=-1, x",
        },
    )
    assert response.status_code == 200 and response.headers["x-gateway-cache"] == "exact"
