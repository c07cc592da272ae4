"""`POST /v1/chat/completions`: parse the request, let the pipeline handle it, render
the answer. The pipeline stores, records and does all the work after the response."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from gateway.api.cache_headers import request_cache_control
from gateway.api.deps import authenticate, get_services, read_body, request_id
from gateway.api.responses import SSE_DONE, json_response, sse_event, sse_from_list
from gateway.api.scope import NAMESPACE_HEADER, SESSION_HEADER, memory_user, scope_header
from gateway.completions import replay_chunks
from gateway.errors import GatewayError, ModelNotFound
from gateway.pipeline.decision import Decision
from gateway.pipeline.reasons import Layer
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import CompletionOutcome

router = APIRouter()

SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


MODEL_HEADER = "x-gateway-model"


def _cache_headers(decision: Decision) -> dict[str, str]:
    # The provider's allow-listed headers (rate limits, retry-after, its request id)
    # when it was called; the gateway's own come after and win.
    headers = dict(decision.upstream.headers)
    # Which model answered: a fallback's name when the requested model's deployments
    # failed (the body's `model` is what that provider reported).
    headers[MODEL_HEADER] = decision.answered_by
    layer = decision.layer
    headers["x-gateway-cache"] = layer.value
    if decision.reason is not None and layer in (Layer.MISS, Layer.BYPASS):
        headers["x-gateway-cache-reason"] = decision.reason.value
    if layer is Layer.SEMANTIC and decision.similarity is not None:
        headers["x-gateway-similarity"] = f"{decision.similarity:.4f}"
    if layer in (Layer.EXACT, Layer.SEMANTIC):
        served = decision.served
        headers["x-gateway-tokens-saved"] = str(0 if served is None else served.tokens_saved)
        if served is not None:
            # HTTP's `Age`: how long ago the served answer was stored (cf. max-age).
            headers["age"] = str(served.age_seconds)
    headers["x-gateway-memory-tokens"] = str(decision.memory.tokens)
    if decision.coalesced:
        # Served with the answer of a concurrent identical request (single flight).
        headers["x-gateway-coalesced"] = "1"
    return headers


async def _parse(request: Request) -> ChatRequest:
    services = get_services(request)
    principal = authenticate(request, services)
    raw = await read_body(request, services.config.server.max_request_bytes)
    # Large bodies in a worker thread: other requests are served meanwhile.
    body, parsed = await services.body_parser.parse_chat(raw)
    if not services.provider.has_model(parsed.model):
        raise ModelNotFound(f"The model '{parsed.model}' does not exist.", param="model")
    return ChatRequest(
        request_id=request_id(request),
        principal=principal,
        model=parsed.model,
        body=body,
        policy=services.policies.resolve(principal.tenant, parsed.model),
        cache_control=request_cache_control(request),
        user=memory_user(request, body.get("user")),
        session=scope_header(request, SESSION_HEADER),
        namespace=scope_header(request, NAMESPACE_HEADER),
    )


@router.post("/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    chat = await _parse(request)
    try:
        outcome = await get_services(request).pipeline.handle(chat)
    except GatewayError:
        raise
    except Exception as exc:
        raise GatewayError("The gateway failed to handle this request.") from exc
    headers = _cache_headers(outcome.decision)
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
