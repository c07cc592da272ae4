"""`POST /v1/messages` seen from the official `anthropic` SDK over HTTP, on both backends:
a miss, an exact hit, a paraphrase, streams (live and replayed), tools, count_tokens,
the key headers and Anthropic's error envelope."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import pytest
from anthropic import Anthropic

from gateway.memory.tokens import Tokenizers
from tests.e2e.helpers import client_for, unique_prompt, upstream_calls
from tests.helpers import TENANT_KEYS, FakeUpstream, RunningGateway

MODEL = "fake-model"
SYSTEM = "You are a concise programming tutor."
LOOKUP_TOOL = {
    "name": "lookup_city",
    "description": "Finds a city by name.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def claude(gateway: RunningGateway, tenant: str = "acme", **kwargs: Any) -> Anthropic:
    # The SDK appends /v1/messages to its base URL and sends the key as `x-api-key`.
    return Anthropic(base_url=gateway.url, api_key=TENANT_KEYS[tenant], max_retries=0, **kwargs)


def _create(gateway: RunningGateway, text: str, **extra: Any) -> tuple[httpx.Headers, Any]:
    raw = claude(gateway).messages.with_raw_response.create(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": text}], **extra
    )
    return raw.headers, raw.parse()


# What Anthropic's stream sends; the SDK adds events of its own (text, input_json...).
_WIRE_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)


def _stream(gateway: RunningGateway, text: str, **extra: Any) -> tuple[str, list[str], Any]:
    """The cache header, the stream's event types as the SDK saw them, and the final
    message the SDK assembled from them."""
    with claude(gateway).messages.stream(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": text}], **extra
    ) as stream:
        layer = stream.response.headers["x-gateway-cache"]
        events = [event.type for event in stream if event.type in _WIRE_EVENTS]
        final = stream.get_final_message()
    return layer, events, final


def _collapsed(events: list[str]) -> list[str]:
    """Event types with runs of deltas folded into one: a live answer arrives word by
    word, its replay in one delta per block."""
    folded: list[str] = []
    for event in events:
        if event == "content_block_delta" and folded and folded[-1] == event:
            continue
        folded.append(event)
    return folded


def _comparable(message: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = message.model_dump()
    dumped.pop("id")
    dumped.pop("usage")
    return dumped


def test_miss_then_exact_hit_with_honest_usage(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt()
    first_headers, first = _create(gateway, prompt, system=SYSTEM)
    second_headers, second = _create(gateway, prompt, system=SYSTEM)

    assert first_headers["x-gateway-cache"] == "miss"
    assert first.type == "message" and first.role == "assistant"
    assert first.id.startswith("msg_") and second.id != first.id
    assert first.content[0].type == "text"
    assert first.content[0].text.startswith("Answer #") and prompt in first.content[0].text
    assert first.stop_reason == "end_turn"
    assert (first.usage.input_tokens, first.usage.output_tokens) == (10, 7)

    assert second_headers["x-gateway-cache"] == "exact"
    assert second.content[0].text == first.content[0].text
    assert second.model == MODEL and second.stop_reason == "end_turn"
    # The stored answer's counts, every input token read from cache.
    assert second.usage.output_tokens == 7
    assert second.usage.input_tokens == 0
    assert second.usage.cache_read_input_tokens == 10
    assert second_headers["x-gateway-tokens-saved"] == "17"
    assert upstream_calls(upstream, prompt) == 1


def test_the_translation_reaches_the_provider(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt()
    _create(
        gateway,
        prompt,
        system=[{"type": "text", "text": SYSTEM}],
        # Older SDKs take these as arguments; this one sends them in the body.
        extra_body={"temperature": 0.2, "top_p": 0.9, "top_k": 5},
        stop_sequences=["END"],
        metadata={"user_id": "user-7"},
    )
    sent = next(
        body
        for body in reversed(upstream.log.chat_bodies)
        if any(prompt in str(m.get("content")) for m in body["messages"])
    )
    assert sent["messages"][0] == {"role": "system", "content": [{"type": "text", "text": SYSTEM}]}
    assert sent["messages"][1] == {"role": "user", "content": prompt}
    assert sent["max_tokens"] == 64 and sent["stop"] == ["END"]
    assert (sent["temperature"], sent["top_p"], sent["top_k"]) == (0.2, 0.9, 5)
    # metadata.user_id becomes the chat body's `user` (tests/unit/api/): litellm itself
    # sends `user` on only to the models of OpenAI's catalogue.


def test_paraphrase_is_a_semantic_hit(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    calls_before = upstream_calls(upstream, "sort a list in Python")
    _, first = _create(gateway, "How do I sort a list in Python?", system=SYSTEM)
    headers, second = _create(gateway, "How can I sort a list in Python?", system=SYSTEM)
    assert headers["x-gateway-cache"] == "semantic"
    assert second.content[0].text == first.content[0].text
    assert second.usage.cache_read_input_tokens == 10
    assert upstream_calls(upstream, "sort a list in Python") == calls_before + 1


def test_streamed_replay_parses_like_the_live_stream(gateway: RunningGateway) -> None:
    prompt = unique_prompt("Explain what a Python list comprehension is.")
    live_layer, live_events, live = _stream(gateway, prompt, system=SYSTEM)
    replay_layer, replay_events, replay = _stream(gateway, prompt, system=SYSTEM)
    _, as_json = _create(gateway, prompt, system=SYSTEM)

    assert live_layer == "miss" and replay_layer == "exact"
    assert live_events[:3] == ["message_start", "content_block_start", "content_block_delta"]
    assert live_events[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert _collapsed(replay_events) == _collapsed(live_events)
    assert _comparable(replay) == _comparable(live) == _comparable(as_json)
    assert live.content[0].text.startswith("Answer #")
    assert (live.usage.input_tokens, live.usage.output_tokens) == (10, 7)
    assert (replay.usage.input_tokens, replay.usage.cache_read_input_tokens) == (0, 10)
    assert replay.usage.output_tokens == 7


def _wire_events(gateway: RunningGateway, text: str) -> tuple[str, list[tuple[str, str]]]:
    with httpx.stream(
        "POST",
        f"{gateway.base_url}/messages",
        json={
            "model": MODEL,
            "max_tokens": 64,
            "stream": True,
            "messages": [{"role": "user", "content": text}],
        },
        headers={"x-api-key": TENANT_KEYS["acme"], "anthropic-version": "2023-06-01"},
    ) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in reply.iter_lines() if line]
        layer = reply.headers["x-gateway-cache"]
    # Each event is an `event:` line naming the type its `data:` line carries.
    pairs = list(zip(lines[::2], lines[1::2], strict=True))
    events = []
    for event_line, data_line in pairs:
        name = event_line.removeprefix("event: ")
        assert json.loads(data_line.removeprefix("data: "))["type"] == name
        events.append((name, data_line))
    return layer, events


def test_stream_events_on_the_wire_in_anthropic_order(gateway: RunningGateway) -> None:
    prompt = unique_prompt()
    for expected_layer in ("miss", "exact"):
        layer, events = _wire_events(gateway, prompt)
        names = [name for name, _ in events]
        assert layer == expected_layer
        assert names[:3] == ["message_start", "content_block_start", "ping"]
        assert set(names[3:-3]) == {"content_block_delta"}
        assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
        assert '"stop_reason":"end_turn"' in events[-2][1]


def test_a_tool_use_answer_and_its_tool_result(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt("Find the city named Paris [[tool]]")
    _, message = _create(gateway, prompt, tools=[LOOKUP_TOOL], tool_choice={"type": "auto"})
    assert message.stop_reason == "tool_use"
    call = next(block for block in message.content if block.type == "tool_use")
    assert (call.name, call.input) == ("lookup_city", {"city": "Paris"})

    layer, _, streamed = _stream(gateway, prompt, tools=[LOOKUP_TOOL], tool_choice={"type": "auto"})
    assert layer == "exact"  # the JSON answer's entry, replayed as a stream
    streamed_call = next(block for block in streamed.content if block.type == "tool_use")
    assert (streamed_call.name, streamed_call.input) == ("lookup_city", {"city": "Paris"})
    assert streamed.stop_reason == "tool_use"

    follow_up = unique_prompt("Thanks, and its country?")
    claude(gateway).messages.create(
        model=MODEL,
        max_tokens=64,
        tools=[LOOKUP_TOOL],
        messages=[
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": [call.model_dump()]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call.id, "content": "Paris, France"},
                    {"type": "text", "text": follow_up},
                ],
            },
        ],
    )
    sent = upstream.log.chat_bodies[-1]
    assert sent["tools"][0]["function"]["name"] == "lookup_city"
    assert sent["messages"][1]["tool_calls"][0]["id"] == call.id
    assert sent["messages"][2] == {
        "role": "tool",
        "tool_call_id": call.id,
        "content": "Paris, France",
    }
    assert sent["messages"][3]["content"] == [{"type": "text", "text": follow_up}]


def test_streamed_tool_use_replays_alike(gateway: RunningGateway) -> None:
    prompt = unique_prompt("Look up the city named Lyon [[tool]]")
    live_layer, live_events, live = _stream(gateway, prompt, tools=[LOOKUP_TOOL])
    replay_layer, replay_events, replay = _stream(gateway, prompt, tools=[LOOKUP_TOOL])
    assert (live_layer, replay_layer) == ("miss", "exact")
    assert _collapsed(replay_events) == _collapsed(live_events)
    assert _comparable(replay) == _comparable(live)
    assert live.content[-1].type == "tool_use" and live.content[-1].input == {"city": "Paris"}


def test_a_question_asked_through_chat_is_served_to_messages(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    """The same question translates to the same chat body (system string, user string,
    max_tokens): one cache entry serves both APIs, in either order."""
    prompt = unique_prompt()
    chat = client_for(gateway).chat.completions.create(
        model=MODEL,
        max_tokens=64,
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
    )
    headers, message = _create(gateway, prompt, system=SYSTEM)
    assert headers["x-gateway-cache"] == "exact"
    assert message.content[0].text == chat.choices[0].message.content

    other = unique_prompt()
    _create(gateway, other, system=SYSTEM)
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model=MODEL,
        max_tokens=64,
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": other}],
    )
    assert raw.headers["x-gateway-cache"] == "exact"
    assert upstream_calls(upstream, prompt) == upstream_calls(upstream, other) == 1


def test_count_tokens(gateway: RunningGateway) -> None:
    client = claude(gateway)
    text = "How many tokens does this question take?"
    counted = client.messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": text}]
    )
    counter = Tokenizers().for_model("openai/fake-model")
    assert counted.input_tokens == counter.count_messages([{"role": "user", "content": text}])
    with_system = client.messages.count_tokens(
        model=MODEL, system=SYSTEM, messages=[{"role": "user", "content": text}]
    )
    assert with_system.input_tokens == counter.count_messages(
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    )
    with_tools = client.messages.count_tokens(
        model=MODEL, tools=[LOOKUP_TOOL], messages=[{"role": "user", "content": text}]
    )
    assert with_tools.input_tokens > counted.input_tokens


def test_keys_in_x_api_key_and_api_key_headers_on_every_route(gateway: RunningGateway) -> None:
    prompt = unique_prompt()
    body = {"model": MODEL, "messages": [{"role": "user", "content": prompt}]}
    for header in ("x-api-key", "api-key"):
        reply = httpx.post(
            f"{gateway.base_url}/chat/completions",
            json=body,
            headers={header: TENANT_KEYS["acme"]},
        )
        assert reply.status_code == 200, reply.text
        models = httpx.get(f"{gateway.base_url}/models", headers={header: TENANT_KEYS["acme"]})
        assert models.status_code == 200
    # Keyed to its tenant: globex's key does not see acme's entry.
    reply = httpx.post(
        f"{gateway.base_url}/chat/completions",
        json=body,
        headers={"api-key": TENANT_KEYS["globex"]},
    )
    assert reply.headers["x-gateway-cache"] == "miss"
    # `anthropic-version` is accepted and ignored.
    reply = httpx.post(
        f"{gateway.base_url}/messages",
        json={**body, "max_tokens": 16},
        headers={"x-api-key": TENANT_KEYS["acme"], "anthropic-version": "2023-06-01"},
    )
    assert reply.status_code == 200 and reply.json()["type"] == "message"


def test_a_bad_key_is_a_401_in_anthropic_envelope(gateway: RunningGateway) -> None:
    client = Anthropic(base_url=gateway.url, api_key="sk-wrong", max_retries=0)
    with pytest.raises(anthropic.AuthenticationError) as caught:
        client.messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Hello there"}]
        )
    assert caught.value.status_code == 401
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error" and body["error"]["type"] == "authentication_error"
    assert body["error"]["message"] == "Invalid API key."

    missing = httpx.post(
        f"{gateway.base_url}/messages",
        json={"model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": "Hi"}]},
    )
    assert missing.status_code == 401
    assert missing.json()["error"]["type"] == "authentication_error"
    # Other routes keep OpenAI's envelope.
    chat = httpx.post(f"{gateway.base_url}/chat/completions", json={}, headers={"x-api-key": "no"})
    assert chat.status_code == 401 and chat.json()["error"]["code"] == "invalid_api_key"


@pytest.mark.parametrize(
    ("body", "status", "error_type", "words"),
    [
        ({"messages": [{"role": "user", "content": "Hi"}]}, 400, "invalid_request_error",
         "max_tokens"),
        ({"max_tokens": 0, "messages": [{"role": "user", "content": "Hi"}]}, 400,
         "invalid_request_error", "max_tokens"),
        ({"max_tokens": 8, "temperature": 1.5, "messages": [{"role": "user", "content": "Hi"}]},
         400, "invalid_request_error", "temperature"),
        ({"max_tokens": 8, "messages": [{"role": "user", "content": [
            {"type": "search_result", "source": "x", "title": "t", "content": []}]}]},
         400, "invalid_request_error", "search_result"),
        ({"max_tokens": 8, "api_base": "http://example.invalid",
          "messages": [{"role": "user", "content": "Hi"}]}, 400, "invalid_request_error",
         "api_base"),
        ({"model": "no-such-model", "max_tokens": 8,
          "messages": [{"role": "user", "content": "Hi"}]}, 404, "not_found_error",
         "no-such-model"),
    ],
)  # fmt: skip
def test_bad_requests_get_anthropic_errors(
    gateway: RunningGateway, body: dict[str, Any], status: int, error_type: str, words: str
) -> None:
    reply = httpx.post(
        f"{gateway.base_url}/messages",
        json={"model": MODEL, **body},
        headers={"x-api-key": TENANT_KEYS["acme"]},
    )
    assert reply.status_code == status
    envelope = reply.json()
    assert envelope["type"] == "error"
    assert envelope["error"]["type"] == error_type
    assert words in envelope["error"]["message"]


def test_upstream_failures_use_anthropic_types(gateway: RunningGateway) -> None:
    client = claude(gateway)
    with pytest.raises(anthropic.RateLimitError) as limited:
        client.messages.create(
            model=MODEL,
            max_tokens=16,
            messages=[{"role": "user", "content": unique_prompt("Hi [[status:429]]")}],
        )
    assert isinstance(limited.value.body, dict)
    assert limited.value.body["error"]["type"] == "rate_limit_error"
    with pytest.raises(anthropic.InternalServerError) as failed:
        client.messages.create(
            model=MODEL,
            max_tokens=16,
            messages=[{"role": "user", "content": unique_prompt("Hi [[status:500]]")}],
        )
    assert isinstance(failed.value.body, dict)
    assert failed.value.body["error"]["type"] == "api_error"


def test_a_stream_that_breaks_ends_with_an_error_event(gateway: RunningGateway) -> None:
    layer, events = _wire_events(gateway, unique_prompt("Tell me a story [[abort]]"))
    names = [name for name, _ in events]
    assert layer == "miss"
    assert names[0] == "message_start" and names[-1] == "error"
    assert "message_stop" not in names
    error = json.loads(events[-1][1].removeprefix("data: "))
    assert error["type"] == "error" and error["error"]["type"] == "api_error"
    # The SDK raises on it instead of returning a truncated message.
    with (
        pytest.raises(anthropic.APIStatusError),
        claude(gateway).messages.stream(
            model=MODEL,
            max_tokens=64,
            messages=[{"role": "user", "content": unique_prompt("Another story [[abort]]")}],
        ) as stream,
    ):
        stream.get_final_message()


def test_a_wrong_method_is_a_405_in_anthropic_envelope(gateway: RunningGateway) -> None:
    reply = httpx.get(f"{gateway.base_url}/messages", headers={"x-api-key": TENANT_KEYS["acme"]})
    assert reply.status_code == 405
    assert reply.json()["error"]["type"] == "invalid_request_error"
