"""Legacy completions <-> chat: the translation alone."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.api.legacy_translation import (
    LegacyChunks,
    LegacyCompletionRequest,
    chat_body,
    text_completion,
)
from gateway.api.schemas import parse_body
from gateway.errors import InvalidRequest
from gateway.testing.fake_provider import FakeProvider


def _chat(body: dict[str, Any]) -> dict[str, Any]:
    raw, parsed = parse_body(orjson.dumps(body), LegacyCompletionRequest, rules=FakeProvider())
    return chat_body(raw, parsed)


def test_prompt_becomes_one_user_message_and_parameters_pass() -> None:
    chat = _chat(
        {
            "model": "m",
            "prompt": ["Say hi"],
            "max_tokens": 5,
            "stop": ["\n"],
            "echo": False,
            "logprobs": 3,
            "vendor_option": 1,
        }
    )
    assert chat == {
        "model": "m",
        "messages": [{"role": "user", "content": "Say hi"}],
        "max_tokens": 5,
        "stop": ["\n"],
        "vendor_option": 1,
        "logprobs": True,
        "top_logprobs": 3,
    }


@pytest.mark.parametrize(
    "extra",
    [{"echo": True}, {"suffix": "x"}, {"best_of": 2}, {"prompt": ["a", "b"]}, {"prompt": [[1]]}],
)
def test_what_a_chat_model_cannot_do_is_refused(extra: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequest):
        _chat({"model": "m", "prompt": "q", **extra})


def test_completion_and_chunks_in_the_legacy_shape() -> None:
    token = {"token": "Hi", "logprob": -0.1, "top_logprobs": [{"token": "Hi", "logprob": -0.1}]}
    completion = {
        "id": "chatcmpl-abc",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hi"},
                "logprobs": {"content": [token], "refusal": None},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    legacy = text_completion(completion)
    assert legacy["id"] == "cmpl-abc" and legacy["object"] == "text_completion"
    assert legacy["choices"] == [
        {
            "text": "Hi",
            "index": 0,
            "logprobs": {
                "tokens": ["Hi"],
                "token_logprobs": [-0.1],
                "top_logprobs": [{"Hi": -0.1}],
                "text_offset": [0],
            },
            "finish_reason": "stop",
        }
    ]
    assert legacy["usage"] == completion["usage"]
    chunks = LegacyChunks()
    base = {"id": "chatcmpl-abc", "created": 1, "model": "m"}
    role = {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
    assert chunks.convert(role) is None
    first = chunks.convert({**base, "choices": [{"index": 0, "delta": {"content": "Hi"}}]})
    assert first is not None and first["choices"][0]["text"] == "Hi"
    second = chunks.convert(
        {
            **base,
            "choices": [
                {"index": 0, "delta": {"content": " there"}, "logprobs": {"content": [token]}}
            ],
        }
    )
    assert second is not None and second["choices"][0]["logprobs"]["text_offset"] == [2]
    usage = chunks.convert({**base, "choices": [], "usage": {"total_tokens": 2}})
    assert usage is not None and usage["choices"] == [] and usage["usage"] == {"total_tokens": 2}
