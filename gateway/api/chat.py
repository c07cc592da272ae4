"""`POST /v1/chat/completions`: parse the request, let the pipeline handle it, render
the answer (`chat_render.py`). The pipeline stores, records and does all the work after
the response."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from gateway.api.chat_render import render_outcome
from gateway.api.deps import AppServices, authenticate, read_body
from gateway.api.door import chat_request, handle, preadmitted
from gateway.api.hit_memo import HitMemo
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import CompletionOutcome
from gateway.wiring import Services

router = APIRouter()


async def _parse(request: Request, services: Services) -> tuple[ChatRequest, bytes]:
    principal = await authenticate(request, services)
    raw = await read_body(request, services.config.server.max_request_bytes)
    # Large bodies in a worker thread: other requests are served meanwhile.
    body, parsed = await services.body_parser.parse_chat(raw)
    return chat_request(request, services, principal, parsed.model, body), raw


@router.post("/v1/chat/completions")
async def chat_completions(request: Request, services: AppServices) -> Response:
    chat, raw = await _parse(request, services)
    outcome = await handle(services, chat, preadmitted(request))
    # A plain exact hit: the next identical body may take the shortcut.
    memo: HitMemo | None = getattr(request.app.state, "hit_memo", None)
    if memo is not None and isinstance(outcome, CompletionOutcome):
        memo.learn(raw, chat, outcome.decision)
    return render_outcome(chat, outcome)
