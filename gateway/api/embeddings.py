"""`POST /v1/embeddings`: passed through to the provider (not cached)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from gateway.api.deps import AppServices, authenticated_body
from gateway.api.model_access import check_model_allowed
from gateway.api.responses import json_response
from gateway.api.schemas import EmbeddingRequest
from gateway.errors import ModelNotFound

router = APIRouter()


@router.post("/v1/embeddings")
async def create_embeddings(request: Request, services: AppServices) -> Response:
    principal, body, parsed = await authenticated_body(request, services, EmbeddingRequest)
    check_model_allowed(principal, parsed.model)
    if not services.provider.has_model(parsed.model):
        raise ModelNotFound(f"The model '{parsed.model}' does not exist.", param="model")
    return json_response(await services.provider.embed(body))
