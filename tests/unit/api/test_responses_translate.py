"""The Responses request -> chat body translation (litellm's bridge, wrapped)."""

from __future__ import annotations

import pytest

from gateway.api.responses_translate import check_supported, input_items, to_chat_body
from gateway.cache.keys import exact_cache_key
from gateway.errors import InvalidRequest


def _key(body: dict) -> str:
    return exact_cache_key(tenant="t", namespace={}, model="m", body=body)


def test_string_input_gives_the_chat_body_of_the_same_question() -> None:
    body = to_chat_body({"model": "m", "input": "What is X?"}, input_items("What is X?"))
    assert body == {"model": "m", "messages": [{"role": "user", "content": "What is X?"}]}
    chat = {"model": "m", "messages": [{"role": "user", "content": "What is X?"}]}
    assert _key(body) == _key(chat)
    streamed = to_chat_body(
        {"model": "m", "input": "What is X?", "stream": True, "store": False},
        input_items("What is X?"),
    )
    assert streamed["stream_options"] == {"include_usage": True}
    assert _key(streamed) == _key(chat)


def test_parameters_are_translated_or_passed_through() -> None:
    request = {
        "model": "m",
        "input": "Q",
        "instructions": "Be brief.",
        "max_output_tokens": 20,
        "temperature": 0.5,
        "metadata": {"team": "a"},
        "text": {"format": {"type": "json_object"}, "verbosity": "low"},
        "reasoning": {"effort": "high"},
        "seed": 3,
    }
    body = to_chat_body(request, input_items("Q"))
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["max_tokens"] == 20 and body["temperature"] == 0.5
    assert body["metadata"] == {"team": "a"} and body["seed"] == 3
    assert body["response_format"] == {"type": "json_object"}
    assert body["verbosity"] == "low" and body["reasoning_effort"] == "high"
    for responses_only in ("input", "instructions", "text", "reasoning", "max_output_tokens"):
        assert responses_only not in body


def test_items_with_tool_calls_and_outputs() -> None:
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
    ]
    body = to_chat_body({"model": "m", "input": items}, input_items(items))
    user, call, result = body["messages"]
    assert user["role"] == "user"
    assert call["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ]
    assert result == {"role": "tool", "content": "42", "tool_call_id": "c1"}


def test_refusals() -> None:
    with pytest.raises(InvalidRequest):
        input_items(3)
    with pytest.raises(InvalidRequest) as refused:
        check_supported({"background": True})
    assert refused.value.param == "background"
