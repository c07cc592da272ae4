"""`GET /admin/audit?limit=&action=`: the audit trail of admin actions, newest first."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from gateway.api.admin import AdminServices
from gateway.api.deps import bounded_int_param
from gateway.api.responses import json_response
from gateway.errors import StoreUnavailableResponse
from gateway.storage.protocols import StoreUnavailable

router = APIRouter()

DEFAULT_AUDIT_ENTRIES = 100
MAX_AUDIT_ENTRIES = 1000


@router.get("/admin/audit")
async def read_audit(request: Request, services: AdminServices) -> Response:
    limit = bounded_int_param(request, "limit", DEFAULT_AUDIT_ENTRIES, 1, MAX_AUDIT_ENTRIES)
    action = request.query_params.get("action") or None
    try:
        entries = await services.audit_trail.recent(limit, action)
    except StoreUnavailable:
        raise StoreUnavailableResponse("The audit store is unavailable; retry.") from None
    return json_response({"object": "list", "data": [entry.to_api() for entry in entries]})
