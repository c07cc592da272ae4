"""The Anthropic Messages translation (gateway/api/anthropic_translation.py) on its own:
requests to chat bodies, chat answers and chunks to Messages, and the hit usage."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import ValidationError

from gateway.api.anthropic_errors import anthropic_envelope, anthropic_error_type
from gateway.api.anthropic_translation import (
    completion_to_message,
    message_events,
    messages_to_chat,
)
from gateway.api.messages_schema import MessagesRequest
from gateway.completions import hit_usage, replay_chunks

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TOOL = {
    "name": "lookup_city",
    "description": "Finds a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def _completion(**message: Any) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-abc123",
        "object": "chat.completion",
        "created": 1,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, **message},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }


def test_a_request_becomes_the_chat_body_chat_completions_would_send() -> None:
    body = {
        "model": "fake-model",
        "max_tokens": 32,
        "system": "Be brief.",
        "metadata": {"user_id": "user-7"},
        "top_k": 4,
        "stop_sequences": ["END"],
        "messages": [{"role": "user", "content": "What is the capital of France?"}],
    }
    chat = messages_to_chat(body).body
    assert chat == {
        "model": "fake-model",
        "max_tokens": 32,
        "top_k": 4,
        "stop": ["END"],
        "user": "user-7",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is the capital of France?"},
        ],
    }
    assert body["metadata"] == {"user_id": "user-7"}  # the caller's body is left as it was


def test_tools_tool_use_and_tool_results_translate() -> None:
    chat = messages_to_chat(
        {
            "model": "fake-model",
            "max_tokens": 32,
            "stream": True,
            "tools": [TOOL],
            "tool_choice": {"type": "tool", "name": "lookup_city"},
            "messages": [
                {"role": "user", "content": "Find Paris"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "toolu_1", "name": "lookup_city",
                         "input": {"city": "Paris"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "France"},
                        {"type": "image", "source": {"type": "base64",
                                                     "media_type": "image/png", "data": "iVBO"}},
                    ],
                },
            ],
        }
    ).body  # fmt: skip
    assert chat["tools"][0]["function"]["name"] == "lookup_city"
    assert chat["tool_choice"] == {"type": "function", "function": {"name": "lookup_city"}}
    assert chat["stream"] is True and chat["stream_options"] == {"include_usage": True}
    assistant = chat["messages"][1]
    assert "thinking_blocks" not in assistant  # no null fields chat would not have
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'
    assert chat["messages"][2] == {"role": "tool", "tool_call_id": "toolu_1", "content": "France"}
    assert chat["messages"][3]["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}
    ]


def test_an_answer_becomes_a_message() -> None:
    calls = [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "lookup_city", "arguments": '{"city": "Paris"}'},
        }
    ]
    message = completion_to_message(_completion(content="Looking.", tool_calls=calls), {})
    assert message["id"] == "msg_abc123"
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["content"] == [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "call_1", "name": "lookup_city", "input": {"city": "Paris"}},
    ]
    assert message["stop_reason"] == "tool_use"
    assert message["usage"] == {"input_tokens": 12, "output_tokens": 5}


def test_hit_usage_reports_the_stored_counts_as_cache_reads() -> None:
    stored = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    completion = {**_completion(content="Paris."), "usage": hit_usage(stored, "original")}
    usage = completion_to_message(completion, {})["usage"]
    assert usage == {"input_tokens": 0, "output_tokens": 5, "cache_read_input_tokens": 12}


async def _events(completion: dict[str, Any]) -> list[dict[str, Any]]:
    async def chunks() -> AsyncGenerator[dict[str, Any], None]:
        for chunk in replay_chunks(completion, completion_id="chatcmpl-x", include_usage=True):
            yield chunk

    return [e async for e in message_events(chunks(), model="fake-model", tool_names={})]


async def test_a_replayed_answer_streams_in_anthropic_order() -> None:
    events = await _events(_completion(content="Paris is the capital."))
    assert [e["type"] for e in events] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[3]["delta"] == {"type": "text_delta", "text": "Paris is the capital."}
    assert events[5]["delta"]["stop_reason"] == "end_turn"
    assert events[5]["usage"] == {"input_tokens": 12, "output_tokens": 5}


@pytest.mark.parametrize(
    ("block", "words"),
    [
        ({"type": "search_result", "title": "t"}, "search_result"),
        ({"type": "document", "source": {"type": "text", "data": "x"}}, "not supported"),
        ({"type": "image", "source": {"type": "file", "file_id": "f"}}, "not supported"),
        ({"type": "text"}, "string 'text'"),
        ({"type": "tool_result"}, "tool_use_id"),
    ],
)
def test_blocks_the_translation_would_drop_are_refused(block: dict[str, Any], words: str) -> None:
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": [block]}]}
    with pytest.raises(ValidationError) as refused:
        MessagesRequest.model_validate(body)
    assert words in str(refused.value)


def test_anthropic_error_types_by_status() -> None:
    assert [
        anthropic_error_type(s) for s in (400, 401, 403, 404, 413, 429, 500, 502, 503, 529)
    ] == [
        "invalid_request_error",
        "authentication_error",
        "permission_error",
        "not_found_error",
        "request_too_large",
        "rate_limit_error",
        "api_error",
        "api_error",
        "overloaded_error",
        "overloaded_error",
    ]
    assert anthropic_envelope("No.", 401, "req_1") == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "No."},
        "request_id": "req_1",
    }


def test_long_tool_names_are_shortened_for_the_provider_and_restored() -> None:
    name = "lookup_" + "x" * 70
    translation = messages_to_chat(
        {
            "model": "fake-model",
            "max_tokens": 8,
            "tools": [{**TOOL, "name": name}],
            "messages": [{"role": "user", "content": "Find Paris"}],
        }
    )
    sent = translation.body["tools"][0]["function"]["name"]
    assert len(sent) == 64 and sent != name
    calls = [{"id": "call_1", "type": "function", "function": {"name": sent, "arguments": "{}"}}]
    message = completion_to_message(_completion(tool_calls=calls), translation.tool_names)
    assert message["content"][0]["name"] == name
