"""`POST /v1/completions` (legacy): the prompt as one user message to the chat model,
through the same pipeline as chat completions, answered as `text_completion` objects
and their stream chunks (`legacy_translation.py`)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from gateway.api.chat_render import render_outcome
from gateway.api.deps import AppServices, authenticated_body
from gateway.api.door import chat_request, handle
from gateway.api.legacy_translation import (
    LegacyChunks,
    LegacyCompletionRequest,
    chat_body,
    text_completion,
)
from gateway.pipeline.request import ChatRequest
from gateway.wiring import Services

router = APIRouter()


async def _parse(request: Request, services: Services) -> ChatRequest:
    # One prompt: never the message counts a chat body is pre-checked for.
    principal, body, parsed = await authenticated_body(request, services, LegacyCompletionRequest)
    return chat_request(request, services, principal, parsed.model, chat_body(body, parsed))


@router.post("/v1/completions")
async def completions(request: Request, services: AppServices) -> Response:
    chat = await _parse(request, services)
    outcome = await handle(services, chat)
    # The chat logic, each completion and chunk translated (`legacy_translation.py`).
    return render_outcome(chat, outcome, completion_as=text_completion, chunks_as=LegacyChunks)
