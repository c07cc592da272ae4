"""Retries, fallbacks and spreading over deployments, through the HTTP API with the
`openai` client against the fake upstream (and a port nothing listens on)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import openai
import pytest

from gateway.testing.threaded_server import free_port
from tests.e2e.helpers import client_for, unique_prompt, upstream_calls
from tests.helpers import FakeUpstream, GatewayFactory, gateway_config_dict

# Routing does not touch storage: one backend is enough.
pytestmark = pytest.mark.parametrize("storage_backend", ["embedded"])


def _deployment(name: str, upstream_model: str, api_base: str) -> dict[str, Any]:
    return {
        "model_name": name,
        "litellm_params": {
            "model": f"openai/{upstream_model}",
            "api_base": api_base,
            "api_key": "sk-upstream-secret-123456",
        },
    }


def _model_list(upstream: FakeUpstream, *extra: dict[str, Any]) -> list[dict[str, Any]]:
    base: list[dict[str, Any]] = gateway_config_dict(upstream.url, Path("unused"))["model_list"]
    return [*base, *extra]


def _dead_base() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


def _messages(prompt: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}]


@pytest.mark.parametrize("stream", [False, True])
def test_a_failing_upstream_is_tried_num_retries_more_times_with_backoff(
    start_gateway: GatewayFactory, upstream: FakeUpstream, stream: bool
) -> None:
    gateway = start_gateway(router_settings={"num_retries": 2, "timeout_seconds": 5})
    client = client_for(gateway)
    prompt = unique_prompt("Explain recursion briefly [[status:503]]")
    started = time.monotonic()
    with pytest.raises(openai.APIStatusError) as caught:
        # A stream that fails before its first chunk is a plain HTTP error (see README).
        client.chat.completions.create(
            model="fake-model", messages=_messages(prompt), stream=stream
        )
    assert caught.value.status_code == 502
    assert upstream_calls(upstream, prompt) == 3
    # Backing off 0.5 s, then 1 s: one deployment, so nothing else to turn to.
    assert time.monotonic() - started >= 1.5


def test_a_rejected_request_is_not_retried(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(router_settings={"num_retries": 2, "timeout_seconds": 5})
    prompt = unique_prompt("Explain recursion briefly [[status:400]]")
    with pytest.raises(openai.BadRequestError):
        client_for(gateway).chat.completions.create(model="fake-model", messages=_messages(prompt))
    assert upstream_calls(upstream, prompt) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_an_unreachable_model_falls_back_to_the_next_one(
    start_gateway: GatewayFactory, upstream: FakeUpstream, stream: bool
) -> None:
    gateway = start_gateway(
        model_list=_model_list(
            upstream,
            _deployment("primary", "primary", _dead_base()),
            _deployment("backup", "backup-model", f"{upstream.url}/v1"),
        ),
        router_settings={
            "num_retries": 0,
            "timeout_seconds": 5,
            "fallbacks": [{"primary": ["backup"]}],
        },
    )
    client = client_for(gateway)
    prompt = unique_prompt("Explain recursion briefly")
    if stream:
        chunks = list(
            client.chat.completions.create(model="primary", messages=_messages(prompt), stream=True)
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        answer = client.chat.completions.create(model="primary", messages=_messages(prompt))
        text = answer.choices[0].message.content or ""
    assert prompt in text
    served = [b for b in upstream.log.chat_bodies if prompt in str(b.get("messages"))]
    assert [b["model"] for b in served] == ["backup-model"]


def test_a_dead_deployment_is_retried_on_its_healthy_sibling_and_then_avoided(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(
        model_list=_model_list(
            upstream,
            _deployment("pair", "pair-dead", _dead_base()),
            _deployment("pair", "pair-live", f"{upstream.url}/v1"),
        ),
        router_settings={"num_retries": 1, "timeout_seconds": 5, "cooldown_seconds": 60},
    )
    client = client_for(gateway)
    started = time.monotonic()
    prompts = [unique_prompt("Explain recursion briefly") for _ in range(12)]
    for prompt in prompts:
        answer = client.chat.completions.create(model="pair", messages=_messages(prompt))
        assert prompt in (answer.choices[0].message.content or "")
    # No back-off: each retry went straight to the live deployment.
    assert time.monotonic() - started < 5.0
    assert all(upstream_calls(upstream, prompt) == 1 for prompt in prompts)
