"""Runtime API keys (admin keys only):

    POST   /admin/keys              {tenant, label?, expires_at? | ttl_seconds?,
                                     allowed_models?, user?} -> 201, the secret once
    GET    /admin/keys?tenant=      the keys (never a secret or its hash)
    POST   /admin/keys/{id}/rotate  {grace_seconds?} -> a new secret; the old one stops
    DELETE /admin/keys/{id}         revoke now

Every call is in the audit trail (`/admin/audit`), without the secret.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gateway.api.admin import AdminServices
from gateway.api.audit_record import audit
from gateway.api.deps import read_body
from gateway.api.responses import json_response
from gateway.api.schemas import parse_body
from gateway.api.scope import checked_identifier
from gateway.errors import GatewayError, InvalidRequest, StoreUnavailableResponse
from gateway.keys.admin import IssuedKey, KeyAlreadyStopped, KeyRequest
from gateway.settings import RESERVED_TENANT_NAMES
from gateway.storage.protocols import StoreUnavailable

router = APIRouter()

_MAX_TTL_SECONDS = 10 * 365 * 24 * 3600
_MAX_GRACE_SECONDS = 7 * 24 * 3600


class KeyNotFound(
    GatewayError, status_code=404, error_type="invalid_request_error", code="key_not_found"
):
    pass


class KeyRevoked(
    GatewayError, status_code=409, error_type="invalid_request_error", code="key_revoked"
):
    pass


class KeyCreateIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    tenant: str = Field(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9_.-]+$")
    label: str | None = Field(default=None, min_length=1, max_length=256)
    expires_at: str | None = Field(default=None, max_length=64)  # ISO 8601, with a zone
    ttl_seconds: int | None = Field(default=None, ge=1, le=_MAX_TTL_SECONDS)
    allowed_models: list[str] | None = Field(default=None, min_length=1, max_length=1000)
    user: str | None = Field(default=None, max_length=256)

    @field_validator("tenant")
    @classmethod
    def _not_reserved(cls, tenant: str) -> str:
        if tenant.lower() in RESERVED_TENANT_NAMES:
            raise ValueError(f"tenant name '{tenant}' is reserved for the gateway")
        return tenant

    @model_validator(mode="after")
    def _one_expiry(self) -> KeyCreateIn:
        if self.expires_at is not None and self.ttl_seconds is not None:
            raise ValueError("give 'expires_at' or 'ttl_seconds', not both")
        return self


class KeyRotateIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    grace_seconds: int = Field(default=0, ge=0, le=_MAX_GRACE_SECONDS)


def _expires_at(parsed: KeyCreateIn, now: float) -> float | None:
    if parsed.ttl_seconds is not None:
        return now + parsed.ttl_seconds
    if parsed.expires_at is None:
        return None
    try:
        moment = datetime.fromisoformat(parsed.expires_at.replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise InvalidRequest(
            "'expires_at' must be an ISO 8601 time with a zone, e.g. 2027-01-31T00:00:00Z.",
            param="expires_at",
        )
    return moment.timestamp()


def _key_request(parsed: KeyCreateIn, known_models: list[str], now: float) -> KeyRequest:
    models = None
    if parsed.allowed_models is not None:
        unknown = sorted(set(parsed.allowed_models) - set(known_models))
        if unknown:
            raise InvalidRequest(
                f"'allowed_models' names models the gateway does not serve: {', '.join(unknown)}.",
                param="allowed_models",
            )
        models = tuple(dict.fromkeys(parsed.allowed_models))
    user = None if parsed.user is None else checked_identifier(parsed.user, "user")
    return KeyRequest(parsed.tenant, parsed.label, _expires_at(parsed, now), models, user)


@asynccontextmanager
async def _store_errors() -> AsyncIterator[None]:
    try:
        yield
    except StoreUnavailable:
        raise StoreUnavailableResponse("The key store is unavailable; retry shortly.") from None


def _issued(issued: IssuedKey) -> dict[str, Any]:
    return {**issued.key.to_api(), "key": issued.secret}


@router.post("/admin/keys", status_code=201)
async def create_key(request: Request, services: AdminServices) -> Response:
    raw = await read_body(request, services.config.server.max_request_bytes)
    parsed = parse_body(raw, KeyCreateIn)[1]
    wanted = _key_request(parsed, services.config.model_names(), time.time())
    async with _store_errors():
        issued = await services.key_admin.create(wanted)
    await audit(
        request, services, "key.create", "ok", tenant=issued.key.tenant, target=issued.key.key_id
    )
    return json_response(_issued(issued), status=201)


@router.get("/admin/keys")
async def list_keys(request: Request, services: AdminServices) -> Response:
    tenant = request.query_params.get("tenant") or None
    async with _store_errors():
        keys = await services.key_admin.list(tenant)
    return json_response({"object": "list", "data": [key.to_api() for key in keys]})


@router.post("/admin/keys/{key_id}/rotate")
async def rotate_key(request: Request, services: AdminServices, key_id: str) -> Response:
    raw = await read_body(request, services.config.server.max_request_bytes)
    parsed = parse_body(raw, KeyRotateIn)[1] if raw.strip() else KeyRotateIn()
    try:
        async with _store_errors():
            issued = await services.key_admin.rotate(key_id, parsed.grace_seconds)
    except KeyAlreadyStopped:
        await audit(request, services, "key.rotate", "rejected", target=key_id)
        raise KeyRevoked(f"The key '{key_id}' is revoked or expired.", param="id") from None
    if issued is None:
        await audit(request, services, "key.rotate", "not_found", target=key_id)
        raise KeyNotFound(f"No key '{key_id}'.", param="id")
    details = {"new_key_id": issued.key.key_id, "grace_seconds": parsed.grace_seconds}
    await audit(
        request,
        services,
        "key.rotate",
        "ok",
        tenant=issued.key.tenant,
        target=key_id,
        details=details,
    )
    return json_response(_issued(issued))


@router.delete("/admin/keys/{key_id}")
async def revoke_key(request: Request, services: AdminServices, key_id: str) -> Response:
    async with _store_errors():
        key = await services.key_admin.revoke(key_id)
    if key is None:
        await audit(request, services, "key.revoke", "not_found", target=key_id)
        raise KeyNotFound(f"No key '{key_id}'.", param="id")
    await audit(request, services, "key.revoke", "ok", tenant=key.tenant, target=key_id)
    return json_response({**key.to_api(), "object": "api_key.revoked", "revoked": True})
