"""`POST /v1/chat/completions`: parse the request, let the pipeline handle it, render
the answer (`chat_render.py`). The pipeline stores, records and does all the work after
the response."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from gateway.api.chat_render import render_outcome
from gateway.api.deps import AppServices, authenticate, read_body
from gateway.api.door import chat_request, handle
from gateway.pipeline.request import ChatRequest
from gateway.wiring import Services

router = APIRouter()


async def _parse(request: Request, services: Services) -> ChatRequest:
    principal = await authenticate(request, services)
    raw = await read_body(request, services.config.server.max_request_bytes)
    # Large bodies in a worker thread: other requests are served meanwhile.
    body, parsed = await services.body_parser.parse_chat(raw)
    return chat_request(request, services, principal, parsed.model, body)


@router.post("/v1/chat/completions")
async def chat_completions(request: Request, services: AppServices) -> Response:
    chat = await _parse(request, services)
    return render_outcome(chat, await handle(services, chat))
