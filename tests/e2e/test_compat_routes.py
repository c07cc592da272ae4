"""Legacy completions, `GET /v1/models/{id}`, every route without `/v1`, and the 404
envelope for routes the gateway does not serve, seen from the openai client and raw
HTTP, on both backends."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from tests.e2e.helpers import client_for, unique_prompt, upstream_calls
from tests.helpers import TENANT_KEYS, FakeUpstream, RunningGateway

AUTH = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}


def _complete(gateway: RunningGateway, prompt: Any, **extra: Any) -> tuple[dict[str, str], Any]:
    raw = client_for(gateway).completions.with_raw_response.create(
        model="fake-model", prompt=prompt, **extra
    )
    return dict(raw.headers), raw.parse()


def _chat(gateway: RunningGateway, prompt: str) -> tuple[dict[str, str], Any]:
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": prompt}]
    )
    return dict(raw.headers), raw.parse()


def _streamed(gateway: RunningGateway, prompt: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    """The layer, and what the client assembles of a legacy stream: text, finish reason,
    logprobs (tokens joined in order) and the usage chunk."""
    raw = client_for(gateway).completions.with_raw_response.create(
        model="fake-model", prompt=prompt, stream=True, **extra
    )
    seen: dict[str, Any] = {"text": "", "finish_reason": None, "tokens": [], "usage": None}
    for chunk in raw.parse():
        assert chunk.object == "text_completion"
        assert chunk.id.startswith("cmpl-")
        if chunk.usage is not None:
            seen["usage"] = chunk.usage.model_dump(exclude_none=True)
        for choice in chunk.choices:
            seen["text"] += choice.text
            seen["finish_reason"] = choice.finish_reason or seen["finish_reason"]
            if choice.logprobs is not None:
                logprobs = choice.logprobs
                seen["tokens"] += list(
                    zip(
                        logprobs.tokens or [],
                        logprobs.token_logprobs or [],
                        logprobs.top_logprobs or [],
                        logprobs.text_offset or [],
                        strict=True,
                    )
                )
    return raw.headers["x-gateway-cache"], seen


def test_legacy_completion_miss_then_exact_hit(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt()
    first_headers, first = _complete(gateway, prompt, max_tokens=50, temperature=0)
    second_headers, second = _complete(gateway, [prompt], max_tokens=50, temperature=0)
    assert first_headers["x-gateway-cache"] == "miss"
    assert second_headers["x-gateway-cache"] == "exact"  # a list of one string is the same
    assert first.object == "text_completion" and first.id.startswith("cmpl-")
    text = first.choices[0].text
    assert text.startswith("Answer #") and text.endswith(f": {prompt}")
    assert second.choices[0].text == first.choices[0].text
    assert second.choices[0].finish_reason == "stop" and second.id != first.id
    assert second.usage is not None and second.usage.total_tokens == 17
    assert upstream_calls(upstream, prompt) == 1
    # Forwarded as one user message, with the parameters as sent.
    body = next(b for b in upstream.log.chat_bodies if prompt in str(b["messages"]))
    assert body["messages"] == [{"role": "user", "content": prompt}]
    assert body["max_tokens"] == 50 and body["temperature"] == 0
    assert "prompt" not in body


def test_same_question_via_chat_and_completions_share_one_entry(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt()
    _, chat = _chat(gateway, prompt)
    headers, legacy = _complete(gateway, prompt)
    assert headers["x-gateway-cache"] == "exact"
    assert legacy.choices[0].text == chat.choices[0].message.content
    other = unique_prompt()
    _complete(gateway, other)
    headers, chat = _chat(gateway, other)
    assert headers["x-gateway-cache"] == "exact"
    assert upstream_calls(upstream, prompt) == 1 and upstream_calls(upstream, other) == 1


def test_legacy_paraphrase_is_a_semantic_hit(gateway: RunningGateway) -> None:
    _, first = _complete(gateway, "How do I sort a list in Python?")
    headers, second = _complete(gateway, "How can I sort a list in Python?")
    assert headers["x-gateway-cache"] == "semantic"
    assert second.choices[0].text == first.choices[0].text


def test_streamed_replay_reads_like_the_live_stream(gateway: RunningGateway) -> None:
    prompt = unique_prompt()
    options = {"logprobs": 2, "stream_options": {"include_usage": True}}
    live_layer, live = _streamed(gateway, prompt, **options)
    replay_layer, replay = _streamed(gateway, prompt, **options)
    assert (live_layer, replay_layer) == ("miss", "exact")
    assert live["text"].startswith("Answer #") and live["finish_reason"] == "stop"
    assert len(live["tokens"]) == len(live["text"].split(" "))
    # (token, logprob, {alternative: logprob} x2, offset): each token where it starts.
    assert all(len(top) == 2 and live["text"][o:].startswith(t) for t, _, top, o in live["tokens"])
    assert replay == {**live, "usage": {**live["usage"], "prompt_tokens_details": {
        "cached_tokens": 10, "audio_tokens": 0}}}  # fmt: skip
    # And the JSON form of the same entry carries the same logprobs.
    headers, completion = _complete(gateway, prompt, logprobs=2)
    assert headers["x-gateway-cache"] == "exact"
    logprobs = completion.choices[0].logprobs
    assert logprobs is not None and logprobs.tokens == [t for t, *_ in live["tokens"]]
    assert logprobs.text_offset == [o for *_, o in live["tokens"]]


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"prompt": ["one question", "another question"]}, "prompt"),
        ({"prompt": [[1, 2, 3]]}, "prompt"),
        ({"prompt": [1, 2, 3]}, "prompt"),
        ({"prompt": "a question", "echo": True}, "echo"),
        ({"prompt": "a question", "suffix": "the end"}, "suffix"),
        ({"prompt": "a question", "best_of": 3}, "best_of"),
        ({"prompt": "a question", "logprobs": 6}, "logprobs"),
        ({"prompt": "a question", "api_base": "http://elsewhere"}, "api_base"),
    ],
)
def test_legacy_requests_the_chat_model_cannot_answer_are_400(
    gateway: RunningGateway, upstream: FakeUpstream, extra: dict[str, Any], param: str
) -> None:
    calls = len(upstream.log.chat_bodies)
    fields = dict(extra)
    with pytest.raises(openai.BadRequestError) as raised:
        client_for(gateway).completions.create(
            model="fake-model", prompt=fields.pop("prompt"), extra_body=fields
        )
    error = raised.value.body
    assert isinstance(error, dict) and error["param"].startswith(param)
    assert error["type"] == "invalid_request_error"
    assert len(upstream.log.chat_bodies) == calls


def test_retrieve_a_model_or_404(gateway: RunningGateway) -> None:
    model = client_for(gateway).models.retrieve("fake-model")
    assert (model.id, model.object) == ("fake-model", "model")
    with pytest.raises(openai.NotFoundError) as raised:
        client_for(gateway).models.retrieve("no-such-model")
    assert isinstance(raised.value.body, dict)
    assert raised.value.body["code"] == "model_not_found"


def test_every_route_answers_without_v1(gateway: RunningGateway) -> None:
    client = OpenAI(base_url=gateway.url, api_key=TENANT_KEYS["acme"], max_retries=0)
    prompt = unique_prompt()
    chat = client.chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": prompt}]
    )
    assert chat.headers["x-gateway-cache"] == "miss"
    legacy = client.completions.with_raw_response.create(model="fake-model", prompt=prompt)
    assert legacy.headers["x-gateway-cache"] == "exact"
    assert legacy.parse().choices[0].text == chat.parse().choices[0].message.content
    assert "fake-model" in [m.id for m in client.models.list()]
    assert client.models.retrieve("fake-model").id == "fake-model"
    embedded = client.embeddings.create(model="fake-embedder", input="alpha")
    assert len(embedded.data[0].embedding) == 8
    # What is not an API route keeps its own path.
    assert httpx.get(f"{gateway.url}/healthz").json() == {"status": "ok"}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/files"),
        ("GET", "/v1/files/file-abc"),
        ("POST", "/v1/batches"),
        ("POST", "/v1/audio/speech"),
        ("POST", "/v1/images/generations"),
        ("POST", "/v1/moderations"),
        ("POST", "/v1/fine_tuning/jobs"),
        ("POST", "/v1/assistants"),
        ("POST", "/v1/threads/runs"),
        ("POST", "/v1/vector_stores"),
        ("POST", "/v1/uploads"),
        ("GET", "/v1/realtime"),
        ("POST", "/files"),
    ],
)
def test_openai_routes_not_served_are_404_naming_what_is(
    gateway: RunningGateway, method: str, path: str
) -> None:
    response = httpx.request(method, f"{gateway.url}{path}", headers=AUTH, json={})
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "unsupported_endpoint"
    assert error["type"] == "invalid_request_error"
    assert "not passed through" in error["message"]
    for served in ("POST /v1/chat/completions", "POST /v1/completions", "GET /v1/models"):
        assert served in error["message"]
    assert "x-request-id" in response.headers


@pytest.mark.parametrize("path", ["/nothing", "/v1/nothing", "/v1", "/admin/nothing"])
def test_unknown_paths_get_the_envelope(gateway: RunningGateway, path: str) -> None:
    response = httpx.post(f"{gateway.url}{path}", headers=AUTH, json={})
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "not_found"
    assert path in error["message"] and "POST /v1/chat/completions" in error["message"]
