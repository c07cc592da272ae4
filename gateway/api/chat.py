"""`POST /v1/chat/completions`: validate, authenticate, run the pipeline, render."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
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
from gateway.pipeline.context import ChatContext
from gateway.pipeline.reasons import Layer
from gateway.pipeline.runner import CompletionOutcome
from gateway.telemetry.recorder import DecisionRecorder

logger = logging.getLogger(__name__)
router = APIRouter()

SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
CLIENT_CLOSED_STATUS = 499  # nginx's convention for "client went away"


MODEL_HEADER = "x-gateway-model"


def _cache_headers(ctx: ChatContext) -> dict[str, str]:
    # The provider's allow-listed headers (rate limits, retry-after, its request id)
    # when it was called; the gateway's own come after and win.
    headers = dict(ctx.upstream.headers)
    # Which model answered: a fallback's name when the requested model's deployments
    # failed (the body's `model` is what that provider reported).
    headers[MODEL_HEADER] = ctx.answered_by
    headers["x-gateway-cache"] = ctx.layer.value
    if ctx.reason is not None and ctx.layer in (Layer.MISS, Layer.BYPASS):
        headers["x-gateway-cache-reason"] = ctx.reason.value
    if ctx.layer is Layer.SEMANTIC and ctx.similarity is not None:
        headers["x-gateway-similarity"] = f"{ctx.similarity:.4f}"
    if ctx.layer in (Layer.EXACT, Layer.SEMANTIC):
        headers["x-gateway-tokens-saved"] = str(ctx.tokens_saved)
        if ctx.served_age_seconds is not None:
            # HTTP's `Age`: how long ago the served answer was stored (cf. max-age).
            headers["age"] = str(ctx.served_age_seconds)
    headers["x-gateway-memory-tokens"] = str(ctx.memory_tokens)
    if ctx.coalesced:
        # Served with the answer of a concurrent identical request (single flight).
        headers["x-gateway-coalesced"] = "1"
    return headers


@router.post("/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    services = get_services(request)
    principal = authenticate(request, services)
    raw = await read_body(request, services.config.server.max_request_bytes)
    # Large bodies in a worker thread: other requests are served meanwhile.
    body, parsed = await services.body_parser.parse_chat(raw)
    if not services.provider.has_model(parsed.model):
        raise ModelNotFound(f"The model '{parsed.model}' does not exist.", param="model")
    ctx = ChatContext(
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
    try:
        outcome = await services.pipeline.run(ctx)
    except GatewayError as exc:
        services.recorder.record(ctx, exc.status_code)
        raise
    except Exception as exc:
        services.recorder.record(ctx, 500)
        raise GatewayError("The gateway failed to handle this request.") from exc
    headers = _cache_headers(ctx)
    if isinstance(outcome, CompletionOutcome):
        if ctx.layer in (Layer.EXACT, Layer.SEMANTIC):
            # Sampled hits are re-asked upstream in the background (false-hit audit).
            services.auditor.maybe_audit(ctx, outcome.completion)
        return _render_completion(ctx, outcome, headers, services.recorder)
    return StreamingResponse(
        _relay(ctx, outcome.chunks, services.recorder),
        media_type="text/event-stream",
        headers={**SSE_HEADERS, **headers},
    )


def _render_completion(
    ctx: ChatContext,
    outcome: CompletionOutcome,
    headers: dict[str, str],
    recorder: DecisionRecorder,
) -> Response:
    completion = outcome.completion

    async def after_response() -> None:
        # Runs once the body is sent: the cache write and the log line cost the
        # client nothing.
        if outcome.after_response is not None:
            await outcome.after_response()
        recorder.record(ctx, 200)

    response: Response
    if not ctx.stream:
        response = json_response(completion, headers=headers)
    else:
        chunks = replay_chunks(
            completion, completion_id=completion["id"], include_usage=ctx.include_usage
        )
        response = StreamingResponse(
            sse_from_list(chunks),
            media_type="text/event-stream",
            headers={**SSE_HEADERS, **headers},
        )
    response.background = BackgroundTask(after_response)
    return response


async def _relay(
    ctx: ChatContext, chunks: AsyncIterator[dict[str, Any]], recorder: DecisionRecorder
) -> AsyncIterator[bytes]:
    status = CLIENT_CLOSED_STATUS
    try:
        async for chunk in chunks:
            yield sse_event(chunk)
        yield SSE_DONE
        status = 200
    except GatewayError as exc:
        # Headers are gone already: report the failure in-band, as OpenAI does, and end
        # the stream without [DONE] so clients see it did not complete.
        status = exc.status_code
        yield sse_event(exc.envelope())
    finally:
        recorder.record(ctx, status)
