"""Admin API (admin keys only: 401 without a valid key, 403 for a tenant key):

    GET  /admin/stats               totals, reasons, latency, timeline, audit, memory,
                                    capacity (entries, bytes, caps, evictions per store),
                                    tool_cache (lookups, puts, deletes per tenant),
                                    review (a chat-model reviewer's use per tenant)
    GET  /admin/spend               spend and savings per tenant and day, model or key
                                    (`admin_spend.py`; also in /admin/stats: `spend`)
    GET  /admin/decisions?limit=N   the most recent decision records, newest first
    GET  /admin/policies            active policies, their sources, the last reload error
    POST /admin/policies/reload     reload now (the watcher also reloads on change)
    POST /admin/cache/purge         remove cache entries matching a filter
    /admin/keys, /admin/audit       runtime keys (`admin_keys.py`), the audit trail
    GET  /metrics                   Prometheus text format

Stats and decisions are this process's (each replica keeps its own; Prometheus sums).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from gateway.adaptive.report import judge_rows, tenant_rows
from gateway.api.audit_record import audit
from gateway.api.deps import AppServices, authenticate, bounded_int_param, read_body
from gateway.api.responses import json_response
from gateway.api.schemas import parse_body
from gateway.cache.eviction import capacity_snapshot
from gateway.cache.purge import PurgeFilter
from gateway.errors import Forbidden, StoreUnavailableResponse
from gateway.spend.overview import spend_overview
from gateway.wiring import Services

router = APIRouter()

DEFAULT_DECISIONS = 100
MAX_DECISIONS = 1000
PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


async def admin_services(request: Request, services: AppServices) -> Services:
    """The services for admin keys only (a FastAPI dependency; `async`: no thread hop).
    A gateway with no tenants and no admin keys is open (local use), admin endpoints
    included."""
    principal = await authenticate(request, services)
    unguarded = services.keys.open and not services.config.auth.admin_keys
    if not principal.is_admin and not unguarded:
        raise Forbidden("This endpoint needs an admin key.")
    request.state.admin_principal = principal  # the audit trail's "who"
    return services


AdminServices = Annotated[Services, Depends(admin_services)]


@router.get("/admin/stats")
async def stats(request: Request, services: AdminServices) -> Response:
    body: dict[str, Any] = services.recorder.stats.snapshot()
    body["audit"] = services.auditor.estimates()
    body["storage"] = await services.storage.describe()
    body["capacity"] = capacity_snapshot(services.storage.ledger, services.config.capacity)
    body["tool_cache"] = services.tool_cache.stats.snapshot()
    # A chat-model reviewer's calls, tokens, cost and budget refusals per tenant and model.
    usage = services.review_usage
    body["review"] = usage.snapshot() if usage is not None else []
    # Spend next to savings, per tenant, model and UTC day, from the (shared) store.
    body["spend"] = await spend_overview(services.spend)
    body["adaptive"] = {
        "tenants": tenant_rows(
            services.adaptive, lambda tenant: services.policies.resolve(tenant, "")
        ),
        "judges": judge_rows(services.adaptive),
        "shadow": {
            "skipped": services.shadow.skipped_total,
            "errors": services.shadow.errors_total,
            "sync_failures": services.adaptive.sync_failures,
        },
    }
    alerts = services.recorder.alerts
    body["alerts"] = {
        "hit_rate_drop": [
            {
                "tenant": state.tenant,
                "firing": state.firing,
                "drop_points": state.drop_points,
                "recent_rate": state.recent_rate,
                "reference_rate": state.reference_rate,
            }
            for state in (alerts.states() if alerts is not None else [])
        ]
    }
    return json_response(body)


@router.get("/admin/decisions")
async def decisions(request: Request, services: AdminServices) -> Response:
    limit = bounded_int_param(request, "limit", DEFAULT_DECISIONS, 1, MAX_DECISIONS)
    records = services.recorder.recent(
        limit,
        tenant=request.query_params.get("tenant"),
        layer=request.query_params.get("layer"),
    )
    return json_response({"object": "list", "data": [record.to_json() for record in records]})


@router.get("/admin/policies")
async def policies(request: Request, services: AdminServices) -> Response:
    return json_response(services.policies.status())


@router.post("/admin/policies/reload")
async def reload_policies(request: Request, services: AdminServices) -> Response:
    # Reading and validating files is blocking work: off the event loop.
    result = await asyncio.to_thread(services.policies.reload)
    status = services.policies.status()
    await audit(request, services, "policies.reload", "ok" if result.ok else "rejected")
    return json_response({"ok": result.ok, **status}, status=200 if result.ok else 422)


class PurgeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    tenant: str | None = Field(default=None, min_length=1, max_length=256)
    model: str | None = Field(default=None, min_length=1, max_length=256)
    namespace: str | None = Field(default=None, min_length=1, max_length=256)
    policy_version: str | None = Field(default=None, min_length=1, max_length=256)
    system_prompt_version: str | None = Field(default=None, max_length=256)
    tool_schema_version: str | None = Field(default=None, max_length=256)
    key: str | None = Field(default=None, min_length=1, max_length=256)
    all: bool = False  # required to purge everything: an empty filter is a mistake

    @model_validator(mode="after")
    def _one_filter_or_all(self) -> PurgeRequest:
        filters = self.model_dump(exclude={"all"}, exclude_none=True)
        if not filters and not self.all:
            raise ValueError("give at least one filter, or 'all': true")
        if filters and self.all:
            raise ValueError("'all' cannot be combined with filters")
        return self


@router.post("/admin/cache/purge")
async def purge(request: Request, services: AdminServices) -> Response:
    raw = await read_body(request, services.config.server.max_request_bytes)
    parsed = parse_body(raw, PurgeRequest)[1]
    purge_filter = PurgeFilter(**parsed.model_dump(exclude={"all"}))
    # Which filters were given, not their values: a `key` or namespace may be sensitive.
    filters = {"filters": sorted(parsed.model_dump(exclude={"all"}, exclude_none=True))}
    try:
        exact = await services.storage.exact.purge(purge_filter)
        semantic = await services.storage.vectors.purge(purge_filter)
    except Exception as exc:
        await audit(
            request, services, "cache.purge", "failed", tenant=parsed.tenant, details=filters
        )
        raise StoreUnavailableResponse("The cache store failed during the purge; retry.") from exc
    details = {**filters, "all": parsed.all, "exact": exact, "semantic": semantic}
    await audit(request, services, "cache.purge", "ok", tenant=parsed.tenant, details=details)
    return json_response({"purged": {"exact": exact, "semantic": semantic}})


@router.get("/metrics")
async def metrics(request: Request, services: AdminServices) -> Response:
    return Response(services.metrics.render(), media_type=PROMETHEUS_CONTENT_TYPE)
