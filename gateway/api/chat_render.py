"""Renders a pipeline outcome in the chat-completions shape: a JSON body, a stored answer
replayed as chunks, or the live stream, each optionally translated (the legacy
completions door answers `text_completion` objects with the same logic)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Any, Protocol

import anyio
from fastapi import Response
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from gateway.api.door import cache_headers
from gateway.api.responses import (
    SSE_DONE,
    SSE_HEADERS,
    json_response,
    sse_event,
    sse_from_list,
)
from gateway.completions import replay_chunks
from gateway.errors import GatewayError
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import CompletionOutcome, StreamOutcome


class ChunkConverter(Protocol):
    """One stream's chunks in the door's shape; None leaves a chunk out."""

    def convert(self, chunk: Mapping[str, Any]) -> Mapping[str, Any] | None: ...


class ChatChunks:
    """Chat chunks as they are."""

    def convert(self, chunk: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return chunk


def _as_is(completion: Mapping[str, Any]) -> Mapping[str, Any]:
    return completion


def render_outcome(
    chat: ChatRequest,
    outcome: CompletionOutcome | StreamOutcome,
    *,
    completion_as: Callable[[Mapping[str, Any]], Mapping[str, Any]] = _as_is,
    chunks_as: Callable[[], ChunkConverter] = ChatChunks,
) -> Response:
    """`completion_as` translates a whole completion; `chunks_as` makes the converter of
    one stream (a new one per response: a converter may keep state across chunks)."""
    headers = cache_headers(outcome.decision)
    if isinstance(outcome, CompletionOutcome):
        return _render_completion(chat, outcome, headers, completion_as, chunks_as())
    return StreamingResponse(
        _sse(outcome.chunks, chunks_as()),
        media_type="text/event-stream",
        headers={**SSE_HEADERS, **headers},
    )


def _render_completion(
    chat: ChatRequest,
    outcome: CompletionOutcome,
    headers: dict[str, str],
    completion_as: Callable[[Mapping[str, Any]], Mapping[str, Any]],
    converter: ChunkConverter,
) -> Response:
    completion = outcome.completion
    response: Response
    if not chat.stream:
        response = json_response(completion_as(completion), headers=headers)
    else:
        # A stored answer streamed: the chat replay, converted like a live stream.
        chunks = replay_chunks(
            completion, completion_id=completion["id"], include_usage=chat.include_usage
        )
        converted = [c for c in (converter.convert(chunk) for chunk in chunks) if c is not None]
        response = StreamingResponse(
            sse_from_list(converted),
            media_type="text/event-stream",
            headers={**SSE_HEADERS, **headers},
        )
    # Runs once the body is sent: the cache write and the log line cost the client
    # nothing.
    response.background = BackgroundTask(outcome.after_response)
    return response


async def _sse(
    chunks: AsyncGenerator[dict[str, Any], None], converter: ChunkConverter
) -> AsyncIterator[bytes]:
    try:
        async for chunk in chunks:
            converted = converter.convert(chunk)
            if converted is not None:
                yield sse_event(converted)
        yield SSE_DONE
    except GatewayError as exc:
        # Headers are gone already: report the failure in-band, as OpenAI does, and end
        # the stream without [DONE] so clients see it did not complete.
        yield sse_event(exc.envelope())
    finally:
        # A client that left closes this generator: close the pipeline's stream now
        # (it ends the upstream call and records the request), shielded from the
        # response's cancellation.
        with anyio.CancelScope(shield=True):
            await chunks.aclose()
