"""`GET /v1/models` and `GET /v1/models/{id}`: the model names of `model_list`."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from gateway.api.deps import AppServices, authenticate
from gateway.api.model_access import check_model_allowed
from gateway.api.responses import json_response
from gateway.errors import ModelNotFound

router = APIRouter()


@router.get("/v1/models")
async def list_models(request: Request, services: AppServices) -> Response:
    principal = await authenticate(request, services)
    names = [name for name in services.config.model_names() if principal.may_use(name)]
    data = [_model(name) for name in names]
    return json_response({"object": "list", "data": data})


# `:path`: a model name may hold slashes (`meta-llama/Llama-3.1-8B`).
@router.get("/v1/models/{model_id:path}")
async def retrieve_model(request: Request, model_id: str, services: AppServices) -> Response:
    check_model_allowed(await authenticate(request, services), model_id)
    if model_id not in services.config.model_names():
        raise ModelNotFound(f"The model '{model_id}' does not exist.", param="model")
    return json_response(_model(model_id))


def _model(name: str) -> dict[str, object]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "gateway"}
