"""Anthropic Messages <-> the chat-completions shapes the pipeline works on.

The one module that knows litellm's Anthropic adapter
(`litellm/llms/anthropic/messages/adapters/`): a litellm change breaks only this file
and its unit tests. litellm is imported inside the functions (by the time a request
arrives the provider has loaded it already), so importing the routes stays cheap.

- `messages_to_chat`: a validated Messages body -> the chat body (system, content
  blocks, tools, tool_choice, stop_sequences, metadata.user_id -> `user`; the sampling
  parameters pass through as they are).
- `completion_to_message`: a `chat.completion` -> a Messages `message`.
- `message_events`: chat-completion chunks -> the Messages stream events, in
  Anthropic's order (message_start, content_block_start, ping, content_block_delta...,
  content_block_stop, message_delta, message_stop).
"""

from __future__ import annotations

import copy
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

PING_EVENT: dict[str, Any] = {"type": "ping"}


@dataclass(frozen=True, slots=True)
class ChatTranslation:
    """The chat body for a Messages request, and the tool names the translation had to
    shorten (OpenAI allows 64 characters): shortened -> original, to restore them in
    the answer."""

    body: dict[str, Any]
    tool_names: dict[str, str] = field(default_factory=dict)


def _adapter() -> Any:
    from litellm.llms.anthropic.messages.adapters.transformation import (
        LiteLLMAnthropicMessagesAdapter,
    )

    return LiteLLMAnthropicMessagesAdapter()


def _without_nulls(message: Mapping[str, Any]) -> dict[str, Any]:
    # The adapter writes `thinking_blocks: null` into every assistant message: a field
    # the same turn sent through chat completions does not have.
    return {key: value for key, value in message.items() if value is not None}


def messages_to_chat(body: Mapping[str, Any]) -> ChatTranslation:
    """The chat-completions body the pipeline forwards for Messages `body` (already
    validated). `stream` asks the provider for usage too: a Messages stream reports it
    in `message_delta`."""
    from litellm.types.llms.anthropic import AnthropicMessagesRequest

    # The adapter pops and rewrites fields of what it is given: a copy of its own.
    request = AnthropicMessagesRequest(**copy.deepcopy(dict(body)))  # type: ignore[typeddict-item]
    translated, tool_names = _adapter().translate_anthropic_to_openai(request)
    chat: dict[str, Any] = dict(translated)
    chat["messages"] = [_without_nulls(message) for message in chat.get("messages") or []]
    if chat.get("stream"):
        chat["stream_options"] = {"include_usage": True}
    else:
        chat.pop("stream", None)
    return ChatTranslation(body=chat, tool_names=dict(tool_names))


def message_id(completion_id: str) -> str:
    """Anthropic's `msg_` id for a chat completion's id (its random part kept)."""
    return "msg_" + completion_id.removeprefix("chatcmpl-")


def _plain(value: Any) -> Any:
    """The adapter's TypedDicts and pydantic objects as plain JSON values."""
    return orjson.loads(orjson.dumps(value, default=_dump))


def _dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_none=True)
    raise TypeError(f"cannot serialise {type(value).__name__}")


def completion_to_message(
    completion: Mapping[str, Any], tool_names: Mapping[str, str]
) -> dict[str, Any]:
    """A Messages `message` for `completion` (its `usage` as it should be reported)."""
    from litellm.types.utils import ModelResponse

    response = ModelResponse(**copy.deepcopy(dict(completion)))
    message: dict[str, Any] = _plain(
        _adapter().translate_openai_response_to_anthropic(response, dict(tool_names) or None)
    )
    message["id"] = message_id(str(completion.get("id") or ""))
    # `stop_details` is a field of a newer API version than most clients know; the
    # adapter sets it for refusals only.
    if message.get("stop_details") is None:
        message.pop("stop_details", None)
    return message


async def _model_chunks(chunks: AsyncIterator[dict[str, Any]]) -> AsyncGenerator[Any, None]:
    from litellm.types.utils import ModelResponseStream

    async for chunk in chunks:
        yield ModelResponseStream(**chunk)


async def message_events(
    chunks: AsyncIterator[dict[str, Any]],
    *,
    model: str,
    tool_names: Mapping[str, str],
) -> AsyncGenerator[dict[str, Any], None]:
    """The Messages stream events for chat-completion `chunks` (live or replayed),
    with Anthropic's `ping` after the first `content_block_start`. An error of
    `chunks` propagates: the caller closes the stream with an `error` event."""
    from litellm.llms.anthropic.messages.adapters.streaming_iterator import (
        AnthropicStreamWrapper,
    )

    wrapper = AnthropicStreamWrapper(
        completion_stream=_model_chunks(chunks),  # type: ignore[arg-type]
        model=model,
        tool_name_mapping=dict(tool_names) or None,
    )
    pinged = False
    try:
        async for event in wrapper:
            plain: dict[str, Any] = _plain(event)
            yield plain
            if not pinged and plain.get("type") == "content_block_start":
                pinged = True
                yield dict(PING_EVENT)
    finally:
        await wrapper.aclose()
