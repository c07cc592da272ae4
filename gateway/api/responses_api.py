"""`POST /v1/responses`, `GET /v1/responses/{id}`, `DELETE /v1/responses/{id}`: the
OpenAI Responses API in front of the same pipeline as chat completions.

A request is translated into a chat-completions body (`responses_translate.py`; an
earlier response named by `previous_response_id` contributes its input and output items
first, so the pipeline sees the whole conversation), handled by the pipeline like any
chat request, and the outcome rendered as a `response` object (`responses_render.py`)
or as the Responses event stream (`responses_stream.py`). With `store` (the default) the
response is kept per tenant for `responses.ttl_seconds`, written before the client
gets it, so a `retrieve` or a follow-up right after always finds it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

import orjson
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from gateway.api.deps import AppServices, authenticate, authenticated_body
from gateway.api.door import cache_headers, chat_request, handle
from gateway.api.responses import SSE_HEADERS, json_response
from gateway.api.responses_render import (
    OutputIds,
    ResponseEcho,
    new_id,
    now_seconds,
    response_object,
)
from gateway.api.responses_schema import ResponsesRequest
from gateway.api.responses_stream import ResponseEventStream
from gateway.api.responses_translate import check_supported, input_items, to_chat_body
from gateway.api.stream_close import close_translated
from gateway.completions import replay_chunks
from gateway.errors import GatewayError, StoreUnavailableResponse
from gateway.pipeline.reasons import Layer
from gateway.pipeline.runner import CompletionOutcome, StreamOutcome
from gateway.storage.protocols import StoredResponse, StoreUnavailable
from gateway.wiring import Services

logger = logging.getLogger(__name__)

router = APIRouter()

# What this gateway's ids look like; anything else cannot be one of its responses.
_RESPONSE_ID = re.compile(r"resp_[0-9a-f]{48}")
# Fields of an output item that only describe it, not what was said.
_OUTPUT_ONLY_FIELDS = ("status",)


class ResponseNotFound(GatewayError):
    status_code = 404
    error_type = "invalid_request_error"
    code = "not_found"


def _not_found(response_id: str, param: str | None = None) -> ResponseNotFound:
    # The id is the client's own (and at most 256 characters): safe to name.
    return ResponseNotFound(f"No response with id '{response_id[:256]}' found.", param=param)


async def _stored(services: Services, tenant: str, response_id: str) -> StoredResponse | None:
    if not _RESPONSE_ID.fullmatch(response_id):
        return None
    try:
        return await services.storage.responses.get(tenant, response_id)
    except StoreUnavailable as exc:
        raise StoreUnavailableResponse("The response store is unavailable; retry.") from exc


def _as_input(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in _OUTPUT_ONLY_FIELDS}


async def _conversation(
    services: Services, tenant: str, body: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The whole conversation's input items: the previous response's (its input and
    its output), then this request's."""
    items = input_items(body.get("input"))
    previous_id = body.get("previous_response_id")
    if previous_id is None:
        return items
    previous = await _stored(services, tenant, str(previous_id))
    if previous is None:
        raise _not_found(str(previous_id), param="previous_response_id")
    earlier = [*previous.input_items, *map(_as_input, previous.response.get("output") or [])]
    return [*earlier, *items]


class _Keeper:
    """Stores a finished response when `store` is on; a store failure is logged and the
    client still gets its answer (fail open: only a later retrieve misses it)."""

    def __init__(
        self, services: Services, tenant: str, store: bool, items: list[dict[str, Any]]
    ) -> None:
        self._services, self._tenant, self._store, self._items = services, tenant, store, items

    async def __call__(self, response: dict[str, Any]) -> None:
        if not self._store:
            return
        stored = StoredResponse(
            response=response, input_items=self._items, created_at=float(response["created_at"])
        )
        try:
            await self._services.storage.responses.put(
                self._tenant,
                str(response["id"]),
                stored,
                self._services.config.responses.ttl_seconds,
            )
        except StoreUnavailable:
            logger.warning(
                "response %s not stored: the response store is unavailable", response["id"]
            )


def _hit_usage(outcome: CompletionOutcome | StreamOutcome) -> dict[str, Any] | None:
    """A hit's usage, as the policy says (`cache_hit_usage`: the pipeline's answer
    carries the stored counts, or zeros)."""
    decision = outcome.decision
    if decision.layer in (Layer.EXACT, Layer.SEMANTIC) and isinstance(outcome, CompletionOutcome):
        usage = outcome.completion.get("usage")
        return dict(usage) if isinstance(usage, dict) else {}
    return None


@router.post("/v1/responses")
async def create_response(request: Request, services: AppServices) -> Response:
    principal, body, parsed = await authenticated_body(request, services, ResponsesRequest)
    check_supported(body)
    items = await _conversation(services, principal.tenant, body)
    translated = to_chat_body(body, items)
    # The translation is a chat body like any other: the same checks and limits.
    chat_body, _ = await services.body_parser.parse_chat(orjson.dumps(translated))
    chat = chat_request(request, services, principal, parsed.model, chat_body)
    outcome = await handle(services, chat)
    headers = cache_headers(outcome.decision)
    echo = ResponseEcho(
        model=parsed.model,
        body=body,
        previous_response_id=parsed.previous_response_id,
        store=parsed.store is not False,
    )
    keeper = _Keeper(services, principal.tenant, echo.store, items)
    response_id, created_at = new_id("resp"), now_seconds()
    hit_usage = _hit_usage(outcome)
    if isinstance(outcome, CompletionOutcome) and not parsed.stream:
        completion = outcome.completion
        response = response_object(
            completion,
            response_id=response_id,
            created_at=created_at,
            echo=echo,
            ids=OutputIds(),
            usage=hit_usage if hit_usage is not None else completion.get("usage"),
            served_from_cache=hit_usage is not None,
        )
        await keeper(response)
        rendered = json_response(response, headers=headers)
        rendered.background = BackgroundTask(outcome.after_response)
        return rendered
    events = ResponseEventStream(
        response_id=response_id,
        created_at=created_at,
        echo=echo,
        usage=hit_usage,
        served_from_cache=hit_usage is not None,
        on_complete=keeper,
    )
    return _stream(outcome, events, headers)


def _stream(
    outcome: CompletionOutcome | StreamOutcome,
    events: ResponseEventStream,
    headers: dict[str, str],
) -> StreamingResponse:
    """The Responses event stream of a live answer, or of a stored one replayed."""
    if isinstance(outcome, CompletionOutcome):
        # A stored answer replayed: the same chunks a live stream would carry.
        chunks = replay_chunks(
            outcome.completion, completion_id=outcome.completion["id"], include_usage=True
        )
        streamed = StreamingResponse(
            _sse(events.events(_aiter(chunks)), None),
            media_type="text/event-stream",
            headers={**SSE_HEADERS, **headers},
        )
        streamed.background = BackgroundTask(outcome.after_response)
        return streamed
    return StreamingResponse(
        _sse(events.events(outcome.chunks), outcome.chunks),
        media_type="text/event-stream",
        headers={**SSE_HEADERS, **headers},
    )


async def _aiter(chunks: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    for chunk in chunks:
        yield chunk


async def _sse(events: Any, upstream: Any) -> AsyncIterator[bytes]:
    """Responses SSE framing (`event:` and `data:` lines; no `[DONE]`). `upstream`: the
    pipeline's live stream, closed when the client leaves (it ends the upstream call
    and records the request)."""
    try:
        async for event in events:
            yield b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n"
    finally:
        await close_translated(events, upstream)


@router.get("/v1/responses/{response_id}")
async def retrieve_response(request: Request, response_id: str, services: AppServices) -> Response:
    principal = await authenticate(request, services)
    stored = await _stored(services, principal.tenant, response_id)
    if stored is None:
        raise _not_found(response_id)
    return json_response(stored.response)


@router.delete("/v1/responses/{response_id}")
async def delete_response(request: Request, response_id: str, services: AppServices) -> Response:
    principal = await authenticate(request, services)
    deleted = False
    if _RESPONSE_ID.fullmatch(response_id):
        try:
            deleted = await services.storage.responses.delete(principal.tenant, response_id)
        except StoreUnavailable as exc:
            raise StoreUnavailableResponse("The response store is unavailable; retry.") from exc
    if not deleted:
        raise _not_found(response_id)
    return json_response({"id": response_id, "object": "response", "deleted": True})
