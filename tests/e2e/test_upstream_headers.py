"""What clients see of the provider: its rate-limit, retry and request-id headers pass
through (an allow-list), and `x-should-retry` keeps the client's own retries from
multiplying the gateway's. The `openai` client with its default `max_retries=2`
against the fake upstream, counting the upstream calls."""

from __future__ import annotations

import httpx
import openai
import pytest
from openai import OpenAI

from tests.e2e.helpers import client_for, unique_prompt, upstream_calls
from tests.helpers import TENANT_KEYS, FakeUpstream, GatewayFactory, RunningGateway

# Headers do not touch storage: one backend is enough.
pytestmark = pytest.mark.parametrize("storage_backend", ["embedded"])


def _retrying_client(gateway: RunningGateway) -> OpenAI:
    """What applications run: the SDK's own retries on (its default, 2)."""
    return OpenAI(base_url=gateway.base_url, api_key=TENANT_KEYS["acme"], max_retries=2)


def _fail(client: OpenAI, prompt: str, stream: bool = False) -> openai.APIStatusError:
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": prompt}], stream=stream
        )
    return caught.value


@pytest.mark.parametrize("stream", [False, True])
def test_a_persistent_429_costs_no_more_upstream_calls_than_the_client_alone_would_make(
    start_gateway: GatewayFactory, upstream: FakeUpstream, stream: bool
) -> None:
    # The gateway retries twice (honouring retry-after), then tells the client not to:
    # 3 upstream calls, not 3 x 3.
    gateway = start_gateway(router_settings={"num_retries": 2, "timeout_seconds": 5})
    prompt = unique_prompt("Explain recursion briefly [[status:429]] [[retry_after:1]]")
    error = _fail(_retrying_client(gateway), prompt, stream)
    assert error.status_code == 429
    assert upstream_calls(upstream, prompt) == 3
    headers = error.response.headers
    assert headers["x-should-retry"] == "false"
    assert headers["retry-after"] == "1"
    assert headers["x-ratelimit-remaining-requests"] == "999"
    assert headers["x-upstream-request-id"].startswith("req_fake")
    assert "x-fake-upstream-host" not in headers  # not on the allow-list
    assert not headers["x-request-id"].startswith("req_fake")  # the gateway's own id
    assert error.body == {
        "message": "The provider for model 'fake-model' is rate limiting requests; retry later.",
        "type": "rate_limit_error",
        "param": None,
        "code": "rate_limit_exceeded",
    }


def test_without_gateway_retries_the_client_retries_after_the_providers_retry_after(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(router_settings={"num_retries": 0, "timeout_seconds": 5})
    prompt = unique_prompt("Explain recursion briefly [[status:429]] [[retry_after:1]]")
    error = _fail(_retrying_client(gateway), prompt)
    assert error.status_code == 429
    assert error.response.headers["x-should-retry"] == "true"
    assert error.response.headers["retry-after"] == "1"
    assert upstream_calls(upstream, prompt) == 3  # the client's three tries, one each


def test_a_provider_asking_for_a_long_wait_is_not_retried_by_the_gateway(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(
        router_settings={"num_retries": 2, "timeout_seconds": 5, "max_retry_after_seconds": 10}
    )
    prompt = unique_prompt("Explain recursion briefly [[status:429]] [[retry_after:120]]")
    error = _fail(client_for(gateway), prompt)  # max_retries=0: nobody waits two minutes
    assert error.status_code == 429
    assert upstream_calls(upstream, prompt) == 1
    assert error.response.headers["retry-after"] == "120"
    assert error.response.headers["x-should-retry"] == "true"  # when the provider allows


def test_an_error_no_retry_can_fix_is_not_retried_by_the_client(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    # The provider refused the gateway's credentials: a 502 to the client, which the
    # SDK would otherwise retry twice.
    gateway = start_gateway(router_settings={"num_retries": 2, "timeout_seconds": 5})
    prompt = unique_prompt("Explain recursion briefly [[status:401]]")
    error = _fail(_retrying_client(gateway), prompt)
    assert error.status_code == 502
    assert error.response.headers["x-should-retry"] == "false"
    assert upstream_calls(upstream, prompt) == 1


def test_an_answer_carries_the_providers_rate_limit_headers_and_request_id(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway()
    prompts = {stream: unique_prompt("Explain recursion briefly") for stream in (False, True)}
    for stream, prompt in prompts.items():
        raw = client_for(gateway).chat.completions.with_raw_response.create(
            model="fake-model", messages=[{"role": "user", "content": prompt}], stream=stream
        )
        if stream:
            list(raw.parse())
        headers = raw.headers
        assert headers["x-gateway-cache"] == "miss"
        assert headers["x-ratelimit-limit-requests"] == "1000"
        assert headers["x-ratelimit-remaining-requests"] == "999"
        assert headers["x-upstream-request-id"].startswith("req_fake")
        assert "x-fake-upstream-host" not in headers
        assert "retry-after" not in headers
    hit = httpx.post(
        f"{gateway.base_url}/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"model": "fake-model", "messages": [{"role": "user", "content": prompts[False]}]},
    ).headers
    assert hit["x-gateway-cache"] == "exact"
    # Nothing was asked upstream: no stale rate-limit state, no provider request id.
    assert "x-upstream-request-id" not in hit
    assert "x-ratelimit-remaining-requests" not in hit
