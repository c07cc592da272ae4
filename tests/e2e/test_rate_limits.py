"""The gateway's own rate limits (policy `rate_limits`), over HTTP with the official
`openai` client on both backends: exact 429 counts, the headers the SDKs read, the
token estimate and its correction, cache hits, and the client's own back-off."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import openai
import pytest
from openai import OpenAI

from gateway.testing.threaded_server import free_port
from tests.e2e.helpers import client_for, gateway_with_policies, unique_prompt, upstream_calls
from tests.helpers import (
    ADMIN_KEY,
    TENANT_KEYS,
    FakeUpstream,
    GatewayFactory,
    RunningGateway,
    gateway_config_dict,
)

NO_CACHE = {"cache-control": "no-cache"}


def _limited(start_gateway: GatewayFactory, tmp_path: Path, policy: str) -> RunningGateway:
    gateway, _ = gateway_with_policies(start_gateway, tmp_path, {"tenant.acme.yaml": policy})
    return gateway


def _ask(
    gateway: RunningGateway, text: str, tenant: str = "acme", **headers: str
) -> httpx.Response:
    return httpx.post(
        f"{gateway.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS[tenant]}", **headers},
        json={"model": "fake-model", "messages": [{"role": "user", "content": text}]},
        timeout=30,
    )


def _settle() -> None:
    """Token corrections run after the response; give them a moment on this busy box."""
    time.sleep(0.3)


def test_requests_over_the_limit_get_exactly_the_excess_as_429s(
    start_gateway: GatewayFactory, tmp_path: Path, upstream: FakeUpstream
) -> None:
    # Three at once, then one a minute: nothing frees up while the test runs.
    gateway = _limited(
        start_gateway, tmp_path, "rate_limits:\n  tenant: {rpm: 1, request_burst: 3}\n"
    )
    prompts = [unique_prompt("Explain recursion briefly") for _ in range(5)]
    answers = [_ask(gateway, text, **NO_CACHE) for text in prompts]
    assert [a.status_code for a in answers] == [200, 200, 200, 429, 429]
    refused = answers[3]
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert refused.json()["error"]["type"] == "requests"
    assert set(refused.json()["error"]) == {"message", "type", "param", "code"}
    # One a minute: the next one frees up within 60 s.
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert int(refused.headers["retry-after-ms"]) <= 60_000
    assert refused.headers["x-ratelimit-limit-requests"] == "1"
    assert refused.headers["x-ratelimit-remaining-requests"] == "0"
    assert refused.headers["x-ratelimit-reset-requests"].endswith("s")
    # Refused before the provider: it saw only the three admitted requests.
    assert [upstream_calls(upstream, text) for text in prompts] == [1, 1, 1, 0, 0]
    # Another tenant has its own (here: no) limit.
    assert _ask(gateway, unique_prompt("Explain recursion"), tenant="globex").status_code == 200


def test_the_key_limit_applies_to_each_key(start_gateway: GatewayFactory, tmp_path: Path) -> None:
    gateway = _limited(start_gateway, tmp_path, "rate_limits:\n  key: {rpm: 1, request_burst: 2}\n")
    answers = [_ask(gateway, unique_prompt("Define a monoid"), **NO_CACHE) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert "API key" in answers[2].json()["error"]["message"]


# 120 tokens at once, refilling at 6 a minute: too slowly to matter during a test.
_SLOW_TOKENS = "rate_limits:\n  tenant: {tpm: 6, token_burst: 120}\n"
_SENTENCE = "Explain in plain words how plants turn sunlight, water and air into sugar."


def _long_prompt(sentences: int) -> str:
    """About 17 tokens a sentence, plus the topic words and the message overhead."""
    return unique_prompt(" ".join([_SENTENCE] * sentences))


def test_tokens_are_estimated_before_the_call_and_corrected_after(
    start_gateway: GatewayFactory, tmp_path: Path, upstream: FakeUpstream
) -> None:
    # The fake upstream reports 17 tokens per answer; each prompt is estimated at ~65.
    gateway = _limited(start_gateway, tmp_path, _SLOW_TOKENS)
    first = _ask(gateway, _long_prompt(3), **NO_CACHE)
    assert first.status_code == 200
    _settle()
    # 120 - 65 left 55 before the correction: the second fits only because the first
    # was corrected to the 17 tokens it really cost.
    second = _ask(gateway, _long_prompt(3), **NO_CACHE)
    assert second.status_code == 200
    _settle()
    # ~86 left: a prompt estimated at ~110 tokens is refused before the provider call.
    too_big = _long_prompt(6)
    refused = _ask(gateway, too_big, **NO_CACHE)
    assert refused.status_code == 429
    assert refused.json()["error"]["type"] == "tokens"
    assert refused.headers["x-ratelimit-limit-tokens"] == "6"
    assert int(refused.headers["x-ratelimit-remaining-tokens"]) < 110
    assert upstream_calls(upstream, too_big) == 0


def test_streamed_tokens_count_after_the_stream_ends(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    gateway = _limited(start_gateway, tmp_path, _SLOW_TOKENS)
    client = client_for(gateway, default_headers=NO_CACHE)
    for _ in range(2):  # as above: the second fits only after the first is corrected
        stream = client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": _long_prompt(3)}],
            stream=True,
            stream_options={"include_usage": True},  # the usage chunk: 17 tokens
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        _settle()


def test_cache_hits_count_against_requests_but_not_tokens(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    # Three requests and 100 tokens at once, refilling too slowly to matter here.
    policy = "rate_limits:\n  tenant: {rpm: 1, request_burst: 3, tpm: 6, token_burst: 100}\n"
    gateway = _limited(start_gateway, tmp_path, policy)
    text = _long_prompt(3)  # ~65 tokens estimated: two uncorrected ones exceed 100
    assert _ask(gateway, text).headers["x-gateway-cache"] == "miss"
    _settle()
    hits = []
    for _ in range(2):
        hits.append(_ask(gateway, text))
        _settle()
    assert [(h.status_code, h.headers["x-gateway-cache"]) for h in hits] == [
        (200, "exact"),
        (200, "exact"),
    ]
    refused = _ask(gateway, text)  # the fourth request in the minute
    assert refused.status_code == 429
    assert refused.json()["error"]["type"] == "requests"


def test_the_openai_client_backs_off_on_the_gateway_429_and_succeeds(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    # One request a second: the second of two back-to-back requests waits ~1 s.
    gateway = _limited(
        start_gateway, tmp_path, "rate_limits:\n  tenant: {rpm: 60, request_burst: 1}\n"
    )
    statuses: list[int] = []
    http_client = httpx.Client(event_hooks={"response": [lambda r: statuses.append(r.status_code)]})
    client = OpenAI(
        base_url=gateway.base_url,
        api_key=TENANT_KEYS["acme"],
        max_retries=2,
        http_client=http_client,
        default_headers=NO_CACHE,
    )
    for _ in range(2):
        client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": unique_prompt("Hi")}]
        )
    assert statuses[0] == 200 and statuses[-1] == 200
    assert 429 in statuses
    # A client without retries sees the 429 as the SDK's RateLimitError.
    with pytest.raises(openai.RateLimitError):
        for _ in range(2):
            client_for(gateway, default_headers=NO_CACHE).chat.completions.create(
                model="fake-model", messages=[{"role": "user", "content": unique_prompt("Hi")}]
            )


@pytest.mark.parametrize("storage_backend", ["embedded"])
def test_an_unavailable_limiter_fails_open(start_gateway: GatewayFactory, tmp_path: Path) -> None:
    # A Redis nothing listens on: the limiter's store is down from the start.
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"tenant.acme.yaml": "rate_limits:\n  tenant: {rpm: 1}\n"},
        storage={
            "backend": "redis",
            "redis_url": f"redis://127.0.0.1:{free_port()}/0",
            "path": str(tmp_path / "d"),
        },
    )
    answers = [_ask(gateway, unique_prompt("Define a functor"), **NO_CACHE) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    metrics = httpx.get(
        f"{gateway.url}/metrics", headers={"authorization": f"Bearer {ADMIN_KEY}"}
    ).text
    assert 'gateway_store_failures_total{operation="acquire",store="rate_limiter"}' in metrics


def _deployment(upstream: FakeUpstream, name: str, **params: object) -> dict[str, object]:
    return {
        "model_name": "busy-model",
        "litellm_params": {
            "model": f"openai/{name}",
            "api_base": f"{upstream.url}/v1",
            "api_key": "sk-upstream-secret-123456",
            **params,
        },
    }


def _busy_gateway(
    start_gateway: GatewayFactory, upstream: FakeUpstream, *deployments: dict[str, object]
) -> RunningGateway:
    base = gateway_config_dict(upstream.url, Path("unused"))["model_list"]
    return start_gateway(model_list=[*base, *deployments])


def _ask_busy(gateway: RunningGateway, text: str) -> httpx.Response:
    return httpx.post(
        f"{gateway.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}", **NO_CACHE},
        json={"model": "busy-model", "messages": [{"role": "user", "content": text}]},
        timeout=30,
    )


def _answered_by(upstream: FakeUpstream, text: str) -> list[str]:
    return [
        str(body.get("model"))
        for body in upstream.log.chat_bodies
        if any(text in str(m.get("content")) for m in body.get("messages", []))
    ]


def test_a_deployment_at_its_rpm_is_skipped_for_another_then_429(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = _busy_gateway(
        start_gateway,
        upstream,
        _deployment(upstream, "deploy-a", rpm=1),
        _deployment(upstream, "deploy-b", rpm=1),
    )
    prompts = [unique_prompt("Define a lens") for _ in range(3)]
    answers = [_ask_busy(gateway, text) for text in prompts]
    assert [a.status_code for a in answers] == [200, 200, 429]
    # One call each: the second request went to the deployment that still had room.
    models = [*_answered_by(upstream, prompts[0]), *_answered_by(upstream, prompts[1])]
    assert sorted(models) == ["deploy-a", "deploy-b"]
    assert _answered_by(upstream, prompts[2]) == []
    refused = answers[2]
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert int(refused.headers["retry-after"]) >= 1


def test_a_deployment_over_its_tpm_is_skipped(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    # deploy-a takes all the traffic (deploy-b has weight 0) until its tokens run out;
    # each answer uses 17 tokens, so the second takes it past 20.
    gateway = _busy_gateway(
        start_gateway,
        upstream,
        _deployment(upstream, "deploy-a", tpm=20),
        _deployment(upstream, "deploy-b", weight=0),
    )
    prompts = [unique_prompt("Define a prism") for _ in range(3)]
    for text in prompts:
        assert _ask_busy(gateway, text).status_code == 200
    assert [_answered_by(upstream, text) for text in prompts] == [
        ["deploy-a"],
        ["deploy-a"],
        ["deploy-b"],
    ]


def test_the_anthropic_door_answers_its_own_429_envelope(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    gateway = _limited(start_gateway, tmp_path, "rate_limits:\n  tenant: {rpm: 1}\n")

    def ask() -> httpx.Response:
        return httpx.post(
            f"{gateway.url}/v1/messages",
            headers={"x-api-key": TENANT_KEYS["acme"], **NO_CACHE},
            json={
                "model": "fake-model",
                "max_tokens": 32,
                "messages": [{"role": "user", "content": unique_prompt("Define a group")}],
            },
            timeout=30,
        )

    assert ask().status_code == 200
    refused = ask()
    assert refused.status_code == 429
    assert refused.json()["type"] == "error"
    assert refused.json()["error"]["type"] == "rate_limit_error"
    assert int(refused.headers["retry-after"]) >= 1
