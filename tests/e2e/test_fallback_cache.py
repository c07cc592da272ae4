"""An answer a fallback model gave is cached as that model's, never as the requested
model's, and the response says which model answered: the `openai` client over HTTP,
the requested model's only deployment down (nothing listens on its port)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gateway.testing.threaded_server import free_port
from tests.e2e.helpers import client_for, gateway_with_policies, unique_prompt, upstream_calls
from tests.helpers import FakeUpstream, GatewayFactory, RunningGateway, gateway_config_dict


def _deployment(name: str, upstream_model: str, api_base: str) -> dict[str, Any]:
    return {
        "model_name": name,
        "litellm_params": {
            "model": f"openai/{upstream_model}",
            "api_base": api_base,
            "api_key": "sk-upstream-secret-123456",
        },
    }


def _fallback_settings(upstream: FakeUpstream) -> dict[str, Any]:
    base: list[dict[str, Any]] = gateway_config_dict(upstream.url, Path("unused"))["model_list"]
    return {
        "model_list": [
            *base,
            _deployment("primary", "primary-model", f"http://127.0.0.1:{free_port()}/v1"),
            _deployment("backup", "backup-model", f"{upstream.url}/v1"),
        ],
        "router_settings": {
            "num_retries": 0,
            "timeout_seconds": 5,
            "fallbacks": [{"primary": ["backup"]}],
        },
    }


def _ask(gateway: RunningGateway, model: str, prompt: str, stream: bool = False) -> Any:
    """(headers, model field, text) of one request."""
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": prompt}], stream=stream
    )
    if stream:
        chunks = [c for c in raw.parse() if c.choices]
        text = "".join(c.choices[0].delta.content or "" for c in chunks)
        return raw.headers, chunks[0].model, text
    answer = raw.parse()
    return raw.headers, answer.model, answer.choices[0].message.content


def test_a_fallback_answer_is_stored_under_the_fallback_models_key(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(**_fallback_settings(upstream))
    prompt = unique_prompt("Explain recursion briefly")

    headers, model, text = _ask(gateway, "primary", prompt)
    assert prompt in text
    assert model == "backup-model"  # what the provider that answered reported
    assert headers["x-gateway-model"] == "backup"
    assert headers["x-gateway-cache"] == "miss"

    # Asked for the primary again: not served the backup's answer from the cache.
    again_headers, _, again_text = _ask(gateway, "primary", prompt)
    assert again_headers["x-gateway-cache"] == "miss"
    assert again_headers["x-gateway-model"] == "backup"
    assert again_text != text  # a fresh upstream answer (each carries a new number)

    # Asked for the backup itself: its own answer, from the exact cache.
    hit_headers, hit_model, hit_text = _ask(gateway, "backup", prompt)
    assert hit_headers["x-gateway-cache"] == "exact"
    assert hit_headers["x-gateway-model"] == "backup"
    assert hit_model == "backup"
    assert hit_text == again_text  # the latest answer the backup gave for this request
    assert upstream_calls(upstream, prompt) == 2


def test_a_streamed_fallback_answer_is_stored_under_the_fallback_models_key(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(**_fallback_settings(upstream))
    prompt = unique_prompt("Explain recursion briefly")

    headers, model, text = _ask(gateway, "primary", prompt, stream=True)
    assert prompt in text
    assert model == "backup-model"
    assert headers["x-gateway-model"] == "backup"

    again_headers, _, again_text = _ask(gateway, "primary", prompt, stream=True)
    assert again_headers["x-gateway-cache"] == "miss"
    assert again_text != text
    hit_headers, _, hit_text = _ask(gateway, "backup", prompt, stream=True)
    assert hit_headers["x-gateway-cache"] == "exact"
    assert hit_headers["x-gateway-model"] == "backup"
    assert hit_text == again_text
    assert upstream_calls(upstream, prompt) == 2


def test_fallback_answers_are_not_stored_when_the_policy_says_so(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"default.yaml": "cache_fallback_answers: false\n"},
        **_fallback_settings(upstream),
    )
    prompt = unique_prompt("Explain recursion briefly")
    headers, _, _ = _ask(gateway, "primary", prompt)
    assert headers["x-gateway-model"] == "backup"
    for model in ("primary", "backup"):
        later, _, _ = _ask(gateway, model, prompt)
        assert later["x-gateway-cache"] == "miss"
    assert upstream_calls(upstream, prompt) == 3


def test_an_answer_of_the_requested_model_names_it(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt("Explain recursion briefly")
    headers, _, _ = _ask(gateway, "fake-model", prompt)
    assert headers["x-gateway-model"] == "fake-model"
    hit_headers, hit_model, _ = _ask(gateway, "fake-model", prompt)
    assert hit_headers["x-gateway-cache"] == "exact"
    assert hit_headers["x-gateway-model"] == hit_model == "fake-model"
