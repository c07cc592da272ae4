"""`GET /v1/models`: the model names of `model_list`."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from gateway.api.deps import AppServices, authenticate
from gateway.api.responses import json_response

router = APIRouter()


@router.get("/v1/models")
async def list_models(request: Request, services: AppServices) -> Response:
    authenticate(request, services)
    data = [
        {"id": name, "object": "model", "created": 0, "owned_by": "gateway"}
        for name in services.config.model_names()
    ]
    return json_response({"object": "list", "data": data})
