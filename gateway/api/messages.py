"""`POST /v1/messages` (Anthropic Messages) and `POST /v1/messages/count_tokens`.

Parse the Messages body, translate it into the chat-completions body the pipeline works
on (`anthropic_translation.py`), let the pipeline handle it, and render its outcome as a
Messages `message` or as Anthropic's stream events. A cached answer is replayed through
the same translation as a live one, so clients parse both alike. Errors on these routes
leave in Anthropic's envelope (`anthropic_errors.py`); `anthropic-version` and
`anthropic-beta` headers are accepted and ignored.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from typing import Any

import orjson
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from gateway.api.anthropic_errors import anthropic_envelope
from gateway.api.anthropic_translation import (
    ChatTranslation,
    completion_to_message,
    message_events,
    messages_to_chat,
)
from gateway.api.deps import AppServices, authenticated_body
from gateway.api.door import cache_headers, chat_request, handle
from gateway.api.messages_schema import CountTokensRequest, MessagesRequest
from gateway.api.model_access import check_model_allowed
from gateway.api.responses import SSE_HEADERS, json_response
from gateway.api.schemas import check_chat_counts
from gateway.api.stream_close import close_translated
from gateway.completions import replay_chunks
from gateway.errors import GatewayError, InvalidRequest, ModelNotFound
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import CompletionOutcome
from gateway.wiring import Services

router = APIRouter()


def _refuse_reserved(body: dict[str, Any], services: Services) -> None:
    # Fields the translation does not know pass on to litellm as keyword arguments:
    # its own settings (api_base, mock_response, ...) must not come from a request.
    for name in body:
        if services.provider.reserved_parameter(name):
            raise InvalidRequest(
                f"'{name}' is a setting of the gateway's provider client, not a request "
                "parameter; it cannot be set by a request.",
                param=name,
            )


def _translate(body: dict[str, Any], services: Services) -> ChatTranslation:
    _refuse_reserved(body, services)
    try:
        translation = messages_to_chat(body)
    except (ValueError, TypeError, KeyError) as exc:
        # The blocks were validated; what is left is the adapter refusing a value.
        raise InvalidRequest(
            f"The request could not be translated for the provider ({type(exc).__name__})."
        ) from None
    server = services.config.server
    check_chat_counts(translation.body, server.max_messages, server.max_content_parts)
    return translation


@router.post("/v1/messages")
async def create_message(request: Request, services: AppServices) -> Response:
    principal, body, parsed = await authenticated_body(request, services, MessagesRequest)
    translation = _translate(body, services)
    chat = chat_request(request, services, principal, parsed.model, translation.body)
    outcome = await handle(services, chat)
    headers = cache_headers(outcome.decision)
    if isinstance(outcome, CompletionOutcome):
        return _render_completion(chat, translation, outcome, headers)
    events = message_events(outcome.chunks, model=chat.model, tool_names=translation.tool_names)
    return StreamingResponse(
        _sse(events, outcome.chunks),
        media_type="text/event-stream",
        headers={**SSE_HEADERS, **headers},
    )


def _render_completion(
    chat: ChatRequest,
    translation: ChatTranslation,
    outcome: CompletionOutcome,
    headers: dict[str, str],
) -> Response:
    # On a hit the pipeline's answer carries the usage the policy says
    # (`cache_hit_usage`): by default the stored counts with every prompt token cached,
    # which translates to `cache_read_input_tokens` (Anthropic counts cache reads apart
    # from `input_tokens`, and clients add the two up for the context size).
    completion = outcome.completion
    response: Response
    if not chat.stream:
        message = completion_to_message(completion, translation.tool_names)
        response = json_response(message, headers=headers)
    else:
        chunks = replay_chunks(completion, completion_id=completion["id"], include_usage=True)
        events = message_events(
            _from_list(chunks), model=chat.model, tool_names=translation.tool_names
        )
        response = StreamingResponse(
            _sse(events, None), media_type="text/event-stream", headers={**SSE_HEADERS, **headers}
        )
    # The cache write and the log line run once the body is sent.
    response.background = BackgroundTask(outcome.after_response)
    return response


async def _from_list(chunks: Iterable[dict[str, Any]]) -> AsyncGenerator[dict[str, Any], None]:
    for chunk in chunks:
        yield chunk


def _event(payload: dict[str, Any]) -> bytes:
    return (
        b"event: " + str(payload["type"]).encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"
    )


async def _sse(
    events: AsyncGenerator[dict[str, Any], None],
    upstream: AsyncGenerator[dict[str, Any], None] | None,
) -> AsyncIterator[bytes]:
    try:
        async for event in events:
            yield _event(event)
    except GatewayError as exc:
        # Headers are gone already: Anthropic reports a failure mid-stream as an
        # `error` event, and the stream ends without `message_stop`.
        yield _event(anthropic_envelope(exc.message, exc.status_code))
    finally:
        await close_translated(events, upstream)


@router.post("/v1/messages/count_tokens")
async def count_tokens(request: Request, services: AppServices) -> Response:
    principal, body, parsed = await authenticated_body(request, services, CountTokensRequest)
    check_model_allowed(principal, parsed.model)
    translation = _translate(body, services)
    if not services.provider.has_model(parsed.model):
        raise ModelNotFound(f"The model '{parsed.model}' does not exist.", param="model")
    tokens = services.prompt_tokens.count(parsed.model, translation.body)
    return json_response({"input_tokens": tokens})
