"""`POST /v1/chat/completions`: parse the request, let the pipeline handle it, render
the answer. The pipeline stores, records and does all the work after the response."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from gateway.api.deps import AppServices, authenticate, read_body
from gateway.api.door import cache_headers, chat_request, handle
from gateway.api.responses import SSE_DONE, json_response, sse_event, sse_from_list
from gateway.completions import replay_chunks
from gateway.errors import GatewayError
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import CompletionOutcome
from gateway.wiring import Services

router = APIRouter()

SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


async def _parse(request: Request, services: Services) -> ChatRequest:
    principal = authenticate(request, services)
    raw = await read_body(request, services.config.server.max_request_bytes)
    # Large bodies in a worker thread: other requests are served meanwhile.
    body, parsed = await services.body_parser.parse_chat(raw)
    return chat_request(request, services, principal, parsed.model, body)


@router.post("/v1/chat/completions")
async def chat_completions(request: Request, services: AppServices) -> Response:
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
        response = json_response(completion, headers=headers)
    else:
        chunks = replay_chunks(
            completion, completion_id=completion["id"], include_usage=chat.include_usage
        )
        response = StreamingResponse(
            sse_from_list(chunks),
            media_type="text/event-stream",
            headers={**SSE_HEADERS, **headers},
        )
    # Runs once the body is sent: the cache write and the log line cost the client
    # nothing.
    response.background = BackgroundTask(outcome.after_response)
    return response


async def _sse(chunks: AsyncGenerator[dict[str, Any], None]) -> AsyncIterator[bytes]:
    try:
        async for chunk in chunks:
            yield sse_event(chunk)
        yield SSE_DONE
    except GatewayError as exc:
        # Headers are gone already: report the failure in-band, as OpenAI does, and end
        # the stream without [DONE] so clients see it did not complete.
        yield sse_event(exc.envelope())
    finally:
        # A client that left closes this generator: close the pipeline's stream now
        # (it ends the upstream call and records the request).
        await chunks.aclose()
