"""Liveness (`/healthz`) and readiness (`/readyz`: started, and how the stores are)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from gateway.api.responses import json_response

router = APIRouter()


@router.get("/healthz")
async def healthz() -> Response:
    return json_response({"status": "ok"})


@router.get("/readyz")
async def readyz(request: Request) -> Response:
    services = getattr(request.app.state, "services", None)
    if services is None:
        return json_response({"status": "starting"}, status=503)
    storage = await services.storage.describe()
    body = {
        "status": "ready" if storage.get("available") else "degraded",
        "storage": storage,
        "policies": services.policies.source,
    }
    # Degraded storage still answers every request (fail open), so the replica stays
    # in rotation; the body tells operators what is wrong.
    return json_response(body)
