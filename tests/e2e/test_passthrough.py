"""What the gateway forwards untouched, and the other endpoints."""

from __future__ import annotations

import logging

import httpx
import pytest

from tests.e2e.helpers import client_for, unique_prompt
from tests.helpers import TENANT_KEYS, FakeUpstream, RunningGateway


def _last_body_with(upstream: FakeUpstream, prompt: str) -> dict:  # type: ignore[type-arg]
    return next(b for b in reversed(upstream.log.chat_bodies) if prompt in str(b["messages"]))


def test_unknown_and_advanced_fields_reach_the_upstream_unchanged(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt()
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    client_for(gateway).chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": prompt}],
        seed=42,
        logprobs=True,
        top_logprobs=2,
        response_format={"type": "json_object"},
        tools=tools,
        tool_choice="auto",
        extra_body={"vendor_option": {"depth": 3}},
    )
    received = _last_body_with(upstream, prompt)
    assert received["seed"] == 42
    assert received["logprobs"] is True
    assert received["top_logprobs"] == 2
    assert received["response_format"] == {"type": "json_object"}
    assert received["tools"] == tools
    assert received["tool_choice"] == "auto"
    assert received["vendor_option"] == {"depth": 3}


def test_models_lists_the_model_list(gateway: RunningGateway) -> None:
    ids = [m.id for m in client_for(gateway).models.list()]
    assert ids == [
        "fake-embedder",
        "fake-judge-no",
        "fake-judge-reads-answer",
        "fake-judge-yes",
        "fake-model",
        "unreachable-model",
    ]


def test_embeddings_pass_through(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    result = client_for(gateway).embeddings.create(
        model="fake-embedder", input=["alpha", "beta"], encoding_format="float"
    )
    assert [len(d.embedding) for d in result.data] == [8, 8]
    assert upstream.log.embedding_bodies[-1]["input"] == ["alpha", "beta"]
    missing = httpx.post(
        f"{gateway.base_url}/embeddings",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"model": "nope", "input": "x"},
    )
    assert missing.status_code == 404


def test_health_and_readiness(gateway: RunningGateway, storage_backend: str) -> None:
    assert httpx.get(f"{gateway.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{gateway.url}/readyz").json()
    assert ready["status"] == "ready"
    assert ready["storage"]["backend"] == storage_backend
    assert ready["storage"]["available"] is True


def test_logs_hold_no_keys_and_no_prompt_text(
    gateway: RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    prompt = unique_prompt("My secret plan is")
    with caplog.at_level(logging.DEBUG):
        client_for(gateway).chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": prompt}]
        )
        httpx.post(
            f"{gateway.base_url}/chat/completions",
            headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
            json={
                "model": "fake-model",
                "messages": [{"role": "user", "content": prompt + " [[status:500]]"}],
            },
        )
    text = "\n".join(r.getMessage() for r in caplog.records)
    decisions = [r for r in caplog.records if r.name == "gateway.decisions"]
    assert len(decisions) == 2  # one record per request, even failed ones
    assert "secret plan" not in text
    for secret in (*TENANT_KEYS.values(), "sk-upstream-secret-123456"):
        assert secret not in text
