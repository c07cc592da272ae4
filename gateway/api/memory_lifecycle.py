"""The memory lifecycle API (README, "Memory kinds and lifecycle"):

    PATCH  /v1/memories/{id}        a new version that supersedes the old one
    DELETE /v1/memories?kind=&before=&source=&namespace=   (or all=true) by filter
    GET    /v1/memories/export?format=jsonl|json          every memory of the user
    POST   /v1/memories/import      restore an export (ids, kinds, times, versions)
    POST   /admin/memories/cleanup  apply the retention policies now

Scoped like the rest of the memory API (`memories.py`): the key's tenant, one user.
Registered before `memories.router`, so that `/v1/memories/export` is not read as the
id of a memory.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson
from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.api.admin import AdminServices
from gateway.api.deps import AppServices, authenticate, read_body
from gateway.api.memories import (
    _owned,
    _policy,
    _required_user,
    _store_errors,
    kind_param,
    new_memory,
    superseded_error,
)
from gateway.api.memory_lifecycle_schemas import (
    MAX_IMPORT_ROWS,
    MemoryExportRow,
    MemoryPatchIn,
    revised_memory_in,
)
from gateway.api.responses import JSON_MEDIA_TYPE, json_response
from gateway.api.schemas import parse_body
from gateway.api.scope import (
    NAMESPACE_HEADER,
    checked_identifier,
    memory_user,
    request_tenant,
    scope_header,
)
from gateway.errors import InvalidRequest, MemoryLimitReached, MemoryRejectedResponse
from gateway.memory.lifecycle import MemoryLifecycle
from gateway.memory.records import MemoryRecord, MemoryScope, parse_time
from gateway.memory.service import MemoryRejected
from gateway.storage.protocols import QuotaExceeded, SupersedeConflict
from gateway.wiring import Services

router = APIRouter()

JSONL_MEDIA_TYPE = "application/x-ndjson"


def _lifecycle(services: Services) -> MemoryLifecycle:
    return MemoryLifecycle(services.memory)


async def _scope(request: Request, services: Services) -> MemoryScope:
    """The caller's tenant and one user (admin keys name both), the namespace if given."""
    principal = await authenticate(request, services)
    tenant = request_tenant(request, principal)
    user = _required_user(memory_user(request, request.query_params.get("user"), principal))
    namespace = request.query_params.get("namespace") or scope_header(request, NAMESPACE_HEADER)
    if namespace is not None:
        checked_identifier(namespace, "namespace")
    return MemoryScope(tenant, user, namespace)


def _rejected(refused: MemoryRejected, where: str) -> MemoryRejectedResponse:
    return MemoryRejectedResponse(
        f"{where} refused: {refused.verdict.message} (reason: {refused.verdict.kind}, "
        f"rule: {refused.verdict.rule}). Nothing was stored.",
        param=where,
    )


@router.patch("/v1/memories/{memory_id}")
async def revise_memory(request: Request, services: AppServices, memory_id: str) -> Response:
    old = await _owned(request, services, memory_id)
    raw = await read_body(request, services.config.server.max_request_bytes)
    patch = parse_body(raw, MemoryPatchIn)[1]
    try:
        item = new_memory(revised_memory_in(old, patch))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InvalidRequest(f"{where}: {first['msg']}", param=where or None) from None
    try:
        async with _store_errors():
            record = await _lifecycle(services).revise(old, item, _policy(services, old.tenant))
    except MemoryRejected as refused:
        raise _rejected(refused, "content") from None
    except SupersedeConflict as conflict:
        raise superseded_error(conflict, "id") from None
    except QuotaExceeded:
        raise MemoryLimitReached(
            "Memory limit reached: the new version does not fit the user's caps. "
            "Nothing was stored; delete memories to make room.",
            param="content",
        ) from None
    return json_response(record.to_api())


@router.delete("/v1/memories")
async def delete_memories(request: Request, services: AppServices) -> Response:
    scope = await _scope(request, services)
    kind = kind_param(request)
    source = request.query_params.get("source")
    before_text = request.query_params.get("before")
    try:
        before = parse_time(before_text) if before_text else None
    except ValueError:
        raise InvalidRequest(
            "'before' must be an ISO-8601 date or date-time.", param="before"
        ) from None
    everything = request.query_params.get("all", "false").lower() == "true"
    filtered = kind or source or before_text or scope.namespace is not None
    if not filtered and not everything:
        raise InvalidRequest(
            "Give at least one filter (kind, before, source, namespace), or all=true.",
            param="all",
            code="filter_required",
        )

    def matches(record: MemoryRecord) -> bool:
        return (
            (kind is None or record.kind == kind)
            and (source is None or record.source == source)
            and (before is None or record.created_at < before)
        )

    async with _store_errors():
        deleted = await _lifecycle(services).delete_where(scope, matches)
    return json_response({"object": "memory.deleted_list", "deleted": deleted})


@router.get("/v1/memories/export")
async def export_memories(request: Request, services: AppServices) -> Response:
    scope = await _scope(request, services)
    export_format = request.query_params.get("format", "jsonl")
    if export_format not in ("jsonl", "json"):
        raise InvalidRequest("'format' must be jsonl or json.", param="format")
    async with _store_errors():
        records = await _lifecycle(services).export(scope)
    rows = [record.to_api() for record in records]
    if export_format == "json":
        return json_response({"object": "list", "data": rows})
    body = b"".join(orjson.dumps(row) + b"\n" for row in rows)
    return Response(body, media_type=JSONL_MEDIA_TYPE)


def _import_rows(raw: bytes) -> list[dict[str, Any]]:
    """An export: `{"data": [...]}` (format=json) or one JSON object per line."""
    try:
        whole = orjson.loads(raw)
    except orjson.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("data"), list):
        return list(whole["data"])
    if isinstance(whole, dict):
        return [whole]
    rows = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            raise InvalidRequest(
                f"Line {number} is not valid JSON.", param=f"line {number}", code="invalid_json"
            ) from None
    return rows


def _parse_import(raw: bytes, scope: MemoryScope) -> list[MemoryRecord]:
    rows = _import_rows(raw)
    if not rows:
        raise InvalidRequest("Nothing to import: send an export.", param="data")
    if len(rows) > MAX_IMPORT_ROWS:
        raise InvalidRequest(f"At most {MAX_IMPORT_ROWS} memories per import.", param="data")
    records = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise InvalidRequest(f"data[{index}] must be a JSON object.", param=f"data[{index}]")
        try:
            parsed = MemoryExportRow.model_validate(row)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in (f"data[{index}]", *first["loc"]))
            raise InvalidRequest(f"{where}: {first['msg']}", param=where) from None
        record = parsed.to_record(scope.tenant, scope.user)
        if scope.namespace is not None:
            record = replace(record, namespace=scope.namespace)
        records.append(record)
    return records


@router.post("/v1/memories/import")
async def import_memories(request: Request, services: AppServices) -> Response:
    scope = await _scope(request, services)
    raw = await read_body(request, services.config.server.max_request_bytes)
    records = _parse_import(raw, scope)
    try:
        async with _store_errors():
            result = await _lifecycle(services).restore(
                scope, records, _policy(services, scope.tenant)
            )
    except MemoryRejected as refused:
        raise _rejected(refused, f"data[{refused.index}].content") from None
    except QuotaExceeded as exceeded:
        raise MemoryLimitReached(
            f"Memory limit reached: the import adds {exceeded.adding} to {exceeded.used} "
            f"(limit {exceeded.cap}). Nothing was stored.",
            param="data",
        ) from None
    return json_response(
        {"object": "memory.import", "imported": result.imported, "skipped": result.skipped},
        status=200,
    )


class CleanupRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    tenant: str | None = Field(default=None, min_length=1, max_length=256)
    user: str | None = Field(default=None, min_length=1, max_length=256)


@router.post("/admin/memories/cleanup")
async def cleanup_memories(request: Request, services: AdminServices) -> Response:
    raw = await read_body(request, services.config.server.max_request_bytes)
    parsed = parse_body(raw, CleanupRequest)[1] if raw.strip() else CleanupRequest()
    if parsed.user is not None and parsed.tenant is None:
        raise InvalidRequest("Name the tenant of the user.", param="tenant")
    async with _store_errors():
        deleted = await _lifecycle(services).cleanup(
            lambda tenant: _policy(services, tenant), parsed.tenant, parsed.user
        )
    return Response(
        orjson.dumps({"object": "memory.cleanup", "deleted": deleted}),
        media_type=JSON_MEDIA_TYPE,
    )
