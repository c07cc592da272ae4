"""`POST /v1/completions` (legacy): the prompt as one user message to the chat model,
through the same pipeline as chat completions, answered as `text_completion` objects
and their stream chunks (`legacy_translation.py`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from gateway.api.chat import SSE_HEADERS
from gateway.api.deps import AppServices, authenticate, read_body
from gateway.api.door import cache_headers, chat_request, handle
from gateway.api.legacy_translation import (
    LegacyChunks,
    LegacyCompletionRequest,
    chat_body,
    text_completion,
)
from gateway.api.responses import SSE_DONE, json_response, sse_event, sse_from_list
from gateway.completions import replay_chunks
from gateway.errors import GatewayError
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import CompletionOutcome
from gateway.wiring import Services

router = APIRouter()


async def _parse(request: Request, services: Services) -> ChatRequest:
    principal = authenticate(request, services)
    raw = await read_body(request, services.config.server.max_request_bytes)
    # One prompt: never the message counts a chat body is pre-checked for.
    body, parsed = await services.body_parser.parse(raw, LegacyCompletionRequest)
    return chat_request(request, services, principal, parsed.model, chat_body(body, parsed))


@router.post("/v1/completions")
async def completions(request: Request, services: AppServices) -> Response:
    chat = await _parse(request, services)
    outcome = await handle(services, chat)
    headers = cache_headers(outcome.decision)
    if isinstance(outcome, CompletionOutcome):
        return _render_completion(chat, outcome, headers)
    return StreamingResponse(
        _sse(outcome.chunks),
        media_type="text/event-stream",
        headers={**SSE_HEADERS, **headers},
    )


def _render_completion(
    chat: ChatRequest, outcome: CompletionOutcome, headers: dict[str, str]
) -> Response:
    completion = outcome.completion
    response: Response
    if not chat.stream:
        response = json_response(text_completion(completion), headers=headers)
    else:
        # A stored answer streamed: the chat replay, converted like a live stream.
        converter = LegacyChunks()
        chunks = replay_chunks(
            completion, completion_id=completion["id"], include_usage=chat.include_usage
        )
        legacy = [c for c in (converter.convert(chunk) for chunk in chunks) if c is not None]
        response = StreamingResponse(
            sse_from_list(legacy),
            media_type="text/event-stream",
            headers={**SSE_HEADERS, **headers},
        )
    # Runs once the body is sent: the cache write and the log line cost the client
    # nothing.
    response.background = BackgroundTask(outcome.after_response)
    return response


async def _sse(chunks: AsyncGenerator[dict[str, Any], None]) -> AsyncIterator[bytes]:
    converter = LegacyChunks()
    try:
        async for chunk in chunks:
            legacy = converter.convert(chunk)
            if legacy is not None:
                yield sse_event(legacy)
        yield SSE_DONE
    except GatewayError as exc:
        # Headers are gone already: the failure in-band, and no [DONE].
        yield sse_event(exc.envelope())
    finally:
        # A client that left closes this generator: close the pipeline's stream now.
        await chunks.aclose()
