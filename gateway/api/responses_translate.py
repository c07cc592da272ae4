"""A Responses API request -> the chat-completions body the pipeline works on.

The conversion of input items, tools, `tool_choice`, `text.format` and `reasoning` is
litellm's Responses bridge (`LiteLLMCompletionResponsesConfig`), imported on first use
(importing litellm costs seconds; this module stays cheap to import). What the bridge
leaves out for a chat target, and we need, is added here:

- `metadata`: the bridge takes it from its own keyword arguments, not the request;
  here it stays in the body as the chat route keeps it;
- `text.verbosity` becomes the chat body's `verbosity` (the bridge drops it);
- parameters this module does not know (`seed`, `stop`, penalties, ...) are passed
  through unchanged, as the chat route passes them (the bridge drops them);
- `stream` asks for the usage chunk (`stream_options.include_usage`), which the
  final `response.completed` event reports.

A string `input` becomes one user message with that string as its content: exactly the
body a chat client sends for the same question, so both share cache entries.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from gateway.errors import InvalidRequest

# Fields of a Responses request this module reads; everything else passes through.
_CONSUMED = frozenset(
    {
        "model",
        "input",
        "instructions",
        "previous_response_id",
        "store",
        "include",
        "truncation",
        "text",
        "reasoning",
        "max_output_tokens",
        "max_tool_calls",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "stream",
        "stream_options",
        "metadata",
        "temperature",
        "top_p",
        "user",
        "service_tier",
        "safety_identifier",
        "top_logprobs",
        "prompt_cache_key",
    }
)
# Accepted by OpenAI, refused here: each changes what the request means in a way the
# gateway does not implement (a server-side conversation object, stored prompt
# templates, background jobs), and ignoring it would answer another question.
_UNSUPPORTED = ("conversation", "prompt", "background")
# What the bridge's output holds for litellm itself, not for the model.
_BRIDGE_ONLY = ("custom_llm_provider", "extra_headers", "model")
# Passed on by name when present (the chat body has the same parameter).
_SAME_NAME = ("prompt_cache_key",)


def input_items(value: Any) -> list[dict[str, Any]]:
    """`input` as a list of items: a string is one user message."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        return [dict(item) for item in value]
    raise InvalidRequest("'input' must be a string or an array of input items.", param="input")


def check_supported(body: Mapping[str, Any]) -> None:
    for name in _UNSUPPORTED:
        if body.get(name) not in (None, False):
            raise InvalidRequest(
                f"'{name}' is not supported by this gateway's Responses API.",
                param=name,
                code="unsupported_parameter",
            )


def to_chat_body(body: Mapping[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    """The chat-completions body for Responses request `body` whose whole conversation
    (earlier responses' items first) is `items`."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from litellm.responses.litellm_completion_transformation.transformation import (
        LiteLLMCompletionResponsesConfig,
    )

    model = str(body["model"])
    stream = bool(body.get("stream"))
    params = {name: body[name] for name in _CONSUMED if name in body and body[name] is not None}
    try:
        # `openai` as the target: the body is OpenAI's chat format, whatever provider the
        # gateway later routes it to (litellm translates again there).
        bridge = LiteLLMCompletionResponsesConfig
        # Typed by litellm with its own TypedDicts; the gateway's are plain JSON objects.
        translate: Any = bridge.transform_responses_api_request_to_chat_completion_request
        bridged = translate(
            model=model,
            input=items,
            responses_api_request=params,
            custom_llm_provider="openai",
            stream=stream or None,
        )
    except Exception as exc:  # the bridge's own validation errors, and its bugs
        # Type only: the bridge's message may quote the input.
        raise InvalidRequest(
            f"The input items could not be translated ({type(exc).__name__}).", param="input"
        ) from None
    chat: dict[str, Any] = {"model": model}
    for name, value in bridged.items():
        if name not in _BRIDGE_ONLY and value is not None:
            chat[name] = value
    chat["messages"] = [_without_index(message) for message in bridged.get("messages") or []]
    for name in _SAME_NAME:
        if body.get(name) is not None:
            chat[name] = body[name]
    text = body.get("text")
    if isinstance(text, dict) and text.get("verbosity") is not None:
        chat["verbosity"] = text["verbosity"]
    if body.get("metadata") is not None:
        chat["metadata"] = body["metadata"]
    for name, value in body.items():
        if name not in _CONSUMED and name not in _UNSUPPORTED and name not in chat:
            chat[name] = value
    if stream:
        chat["stream"] = True
        chat["stream_options"] = {"include_usage": True}
    return chat


def _without_index(message: Any) -> dict[str, Any]:
    """A plain dict, without the stream-only `index` the bridge leaves on the assistant
    message's tool calls (a chat client's history has none: the keys must agree)."""
    item = dict(message)
    calls = item.get("tool_calls")
    if isinstance(calls, list):
        item["tool_calls"] = [
            {k: v for k, v in dict(call).items() if k != "index"} for call in calls
        ]
    return item
