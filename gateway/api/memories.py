"""The memory API: `POST/GET /v1/memories`, `GET/DELETE /v1/memories/{id}`,
`POST /v1/memories/search` (the lifecycle endpoints: `memory_lifecycle.py`).

Scope: the tenant is the API key's, never the body's (an admin key names the tenant
with `x-gateway-tenant`); the user comes from `x-gateway-user` or the body/query `user`.
A non-admin key acts for one user per request and sees only that user's memories; one
that is not theirs answers 404, exactly like one that does not exist.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import orjson
from fastapi import APIRouter, Request, Response

from gateway.api.deps import AppServices, authenticate, bounded_int_param, read_body
from gateway.api.memory_schemas import MemoryBatchIn, MemoryIn, MemorySearchIn
from gateway.api.responses import JSON_MEDIA_TYPE, json_response
from gateway.api.schemas import load_json_object, parse_body
from gateway.api.scope import (
    NAMESPACE_HEADER,
    bound_user,
    checked_identifier,
    memory_user,
    request_tenant,
    scope_header,
)
from gateway.errors import (
    IdempotencyKeyReused,
    InvalidRequest,
    MemoryLimitReached,
    MemoryNotFound,
    MemoryRejectedResponse,
    MemorySuperseded,
    StoreUnavailableResponse,
)
from gateway.memory.records import MEMORY_KINDS, MemoryRecord, MemoryScope, parse_time
from gateway.memory.service import MemoryRejected, MemoryService, NewMemory, WriteOnce
from gateway.policy.memory import MemoryPolicy
from gateway.storage.protocols import (
    AlreadyWritten,
    QuotaExceeded,
    RecordedAnswer,
    RecordFilter,
    StoreUnavailable,
    SupersedeConflict,
)
from gateway.wiring import Services

router = APIRouter()

TENANT_HEADER = "x-gateway-tenant"
# Retries of a memory write with the same key and body get the first answer back
# instead of storing the memories again (see `MemoryLimitsPolicy.idempotency_ttl_seconds`).
IDEMPOTENCY_HEADER = "idempotency-key"
REPLAYED_HEADER = "idempotent-replayed"
MAX_IDEMPOTENCY_KEY_CHARS = 255
_IDEMPOTENCY_KEY = re.compile(rf"[\x21-\x7e]{{1,{MAX_IDEMPOTENCY_KEY_CHARS}}}")
DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


@asynccontextmanager
async def _store_errors() -> AsyncIterator[None]:
    try:
        yield
    except StoreUnavailable:
        # Redis unreachable, or the embedded database closed, locked or out of disk:
        # each backend reports its own failures as `StoreUnavailable`.
        raise StoreUnavailableResponse("The memory store is unavailable; retry shortly.") from None


def _required_user(user: str | None) -> str:
    if user is None:
        raise InvalidRequest(
            "Name the user with 'x-gateway-user' or the 'user' field.",
            param="user",
            code="user_required",
        )
    return user


def _policy(services: Services, tenant: str) -> MemoryPolicy:
    return services.policies.resolve(tenant, "").memory


def _service(services: Services) -> MemoryService:
    return services.memory


@router.post("/v1/memories", status_code=201)
async def create_memories(request: Request, services: AppServices) -> Response:
    principal = await authenticate(request, services)
    tenant = request_tenant(request, principal)
    idempotency_key = _idempotency_key(request)
    raw = await read_body(request, services.config.server.max_request_bytes)
    batch = _parse_create(raw)
    header_user = memory_user(request, None, principal)
    namespace = scope_header(request, NAMESPACE_HEADER)
    users = {item.user or batch.user or header_user for item in batch.items}
    if principal.bound_user is not None:  # a user-bound key writes for its user only
        users = {bound_user(principal.bound_user, named) for named in users}
    if len(users) != 1:
        raise InvalidRequest(
            "All items of one request must belong to one user.", param="user", code="mixed_users"
        )
    user = _required_user(users.pop())
    if header_user is not None and user != header_user:
        raise InvalidRequest(
            "'x-gateway-user' and the body's 'user' name different users.",
            param="user",
            code="conflicting_user",
        )
    namespaces = {item.namespace or batch.namespace or namespace for item in batch.items}
    if len(namespaces) != 1:
        raise InvalidRequest(
            "All items of one request must share one namespace.", param="namespace"
        )
    scope = MemoryScope(tenant, checked_identifier(user, "user"), namespaces.pop())
    items = [new_memory(item) for item in batch.items]
    service = _service(services)
    policy = _policy(services, tenant)
    once = None
    fingerprint = ""
    if idempotency_key is not None:
        fingerprint = _fingerprint(raw, scope)
        once = WriteOnce(idempotency_key, fingerprint, _created_body)
        async with _store_errors():
            recorded = await service.recorded_answer(scope, idempotency_key)
        if recorded is not None:
            return _replay(recorded, fingerprint)
    try:
        async with _store_errors():
            records = await service.add(scope, items, policy, once=once)
    except MemoryRejected as refused:
        raise MemoryRejectedResponse(
            f"items[{refused.index}].content refused: {refused.verdict.message} "
            f"(reason: {refused.verdict.kind}, rule: {refused.verdict.rule}). Nothing was stored.",
            param=f"items[{refused.index}].content",
        ) from None
    except QuotaExceeded as exceeded:
        raise _limit_reached(exceeded) from None
    except AlreadyWritten as written:  # a concurrent request with the same key won
        return _replay(written.recorded, fingerprint)
    except SupersedeConflict as conflict:
        raise superseded_error(conflict, "supersedes") from None
    return Response(_created_body(records), status_code=201, media_type=JSON_MEDIA_TYPE)


def superseded_error(conflict: SupersedeConflict, param: str) -> MemoryNotFound | MemorySuperseded:
    if conflict.superseded_by is None:
        return MemoryNotFound(f"No memory '{conflict.memory_id}'.", param=param)
    return MemorySuperseded(
        f"Memory '{conflict.memory_id}' was already superseded by "
        f"'{conflict.superseded_by}'; revise the current version instead.",
        param=param,
    )


def _created_body(records: Sequence[MemoryRecord]) -> bytes:
    return orjson.dumps({"object": "list", "data": [record.to_api() for record in records]})


def _idempotency_key(request: Request) -> str | None:
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    if not _IDEMPOTENCY_KEY.fullmatch(key):
        raise InvalidRequest(
            f"'{IDEMPOTENCY_HEADER}' must be 1-{MAX_IDEMPOTENCY_KEY_CHARS} visible ASCII "
            "characters (no spaces).",
            param=IDEMPOTENCY_HEADER,
            code="invalid_idempotency_key",
        )
    return key


def _fingerprint(raw: bytes, scope: MemoryScope) -> str:
    """What was asked, independent of key order and whitespace: the body and the scope
    it resolved to (a namespace may come from a header)."""
    canonical = orjson.dumps(
        {"body": load_json_object(raw), "user": scope.user, "namespace": scope.namespace},
        option=orjson.OPT_SORT_KEYS,
    )
    return hashlib.sha256(canonical).hexdigest()


def _replay(recorded: RecordedAnswer, fingerprint: str) -> Response:
    if recorded.fingerprint != fingerprint:
        raise IdempotencyKeyReused(
            f"This '{IDEMPOTENCY_HEADER}' was already used for a different request; "
            "use a new key for a new write.",
            param=IDEMPOTENCY_HEADER,
        )
    return Response(
        recorded.answer,
        status_code=201,
        media_type=JSON_MEDIA_TYPE,
        headers={REPLAYED_HEADER: "true"},
    )


def _limit_reached(exceeded: QuotaExceeded) -> MemoryLimitReached:
    if exceeded.scope == "user":
        detail = _limit_detail(exceeded, "the user", "max_memories_per_user", "max_bytes_per_user")
    elif exceeded.scope == "tenant":
        detail = _limit_detail(
            exceeded,
            "the tenant",
            "capacity.memories.max_entries_per_tenant",
            "capacity.memories.max_bytes_per_tenant",
        )
    else:
        detail = _limit_detail(
            exceeded, "the gateway", "capacity.memories.max_entries", "capacity.memories.max_bytes"
        )
    return MemoryLimitReached(
        f"Memory limit reached: {detail}. Nothing was stored; delete memories to make room.",
        param="items",
    )


def _limit_detail(exceeded: QuotaExceeded, who: str, count_option: str, bytes_option: str) -> str:
    if exceeded.limit == "count":
        return (
            f"{who} has {exceeded.used} memories and this write adds {exceeded.adding}; "
            f"the limit is {exceeded.cap} ({count_option})"
        )
    return (
        f"{who}'s memories take {exceeded.used} bytes and this write adds "
        f"{exceeded.adding}; the limit is {exceeded.cap} ({bytes_option})"
    )


def _parse_create(raw: bytes) -> MemoryBatchIn:
    if "items" in load_json_object(raw):
        return parse_body(raw, MemoryBatchIn)[1]
    return MemoryBatchIn(items=[parse_body(raw, MemoryIn)[1]])


def new_memory(item: MemoryIn) -> NewMemory:
    return NewMemory(
        kind=item.kind,
        key=item.key,
        entity=item.entity,
        occurred_at=parse_time(item.occurred_at) if item.occurred_at else None,
        supersedes=item.supersedes,
        supersede=item.supersede,
        content=item.content,
        source=item.source,
        tags=tuple(item.tags),
        metadata=item.metadata,
        created_at=parse_time(item.created_at) if item.created_at else None,
        valid_from=parse_time(item.valid_from) if item.valid_from else None,
        valid_to=parse_time(item.valid_to) if item.valid_to else None,
    )


@router.get("/v1/memories")
async def list_memories(request: Request, services: AppServices) -> Response:
    principal = await authenticate(request, services)
    tenant = request_tenant(request, principal)
    user = memory_user(request, request.query_params.get("user"), principal)
    if not principal.is_admin:
        user = _required_user(user)
    namespace = request.query_params.get("namespace") or scope_header(request, NAMESPACE_HEADER)
    tag = request.query_params.get("tag")
    limit = bounded_int_param(request, "limit", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
    offset = bounded_int_param(request, "offset", 0, 0, 10**9)
    matches = _list_filter(request)
    async with _store_errors():
        page = await _service(services).store.list_page(
            tenant, user, namespace, tag, limit, offset, matches
        )
    body: dict[str, Any] = {
        "object": "list",
        "data": [record.to_api() for record in page.records],
        "has_more": page.has_more,
    }
    if page.has_more:
        body["next_offset"] = offset + len(page.records)
    return json_response(body)


def bool_param(request: Request, name: str) -> bool:
    value = request.query_params.get(name, "false").lower()
    if value not in ("true", "false", "1", "0"):
        raise InvalidRequest(f"'{name}' must be true or false.", param=name)
    return value in ("true", "1")


def kind_param(request: Request) -> str | None:
    kind = request.query_params.get("kind")
    if kind is not None and kind not in MEMORY_KINDS:
        raise InvalidRequest(f"'kind' must be one of {', '.join(MEMORY_KINDS)}.", param="kind")
    return kind


def _list_filter(request: Request) -> RecordFilter:
    """`key`, `entity` and `kind` read exactly; superseded versions only with
    `include_superseded=true`."""
    include_superseded = bool_param(request, "include_superseded")
    key = request.query_params.get("key")
    entity = request.query_params.get("entity")
    kind = kind_param(request)

    def matches(record: MemoryRecord) -> bool:
        return (
            (include_superseded or record.current)
            and (key is None or record.key == key)
            and (entity is None or record.entity == entity)
            and (kind is None or record.kind == kind)
        )

    return matches


async def _owned(request: Request, services: Services, memory_id: str) -> MemoryRecord:
    principal = await authenticate(request, services)
    tenant = request_tenant(request, principal)
    user = memory_user(request, request.query_params.get("user"), principal)
    if not principal.is_admin:
        user = _required_user(user)
    async with _store_errors():
        record = await _service(services).store.get(tenant, memory_id)
    if record is None or (user is not None and record.user != user):
        raise MemoryNotFound(f"No memory '{memory_id}'.", param="id")
    return record


@router.get("/v1/memories/{memory_id}")
async def get_memory(request: Request, services: AppServices, memory_id: str) -> Response:
    record = await _owned(request, services, memory_id)
    return json_response(record.to_api())


@router.delete("/v1/memories/{memory_id}")
async def delete_memory(request: Request, services: AppServices, memory_id: str) -> Response:
    record = await _owned(request, services, memory_id)
    async with _store_errors():
        deleted = await _service(services).delete(record.tenant, record.id)
    if not deleted:  # deleted concurrently
        raise MemoryNotFound(f"No memory '{memory_id}'.", param="id")
    return json_response({"id": record.id, "object": "memory.deleted", "deleted": True})


@router.post("/v1/memories/search")
async def search_memories(request: Request, services: AppServices) -> Response:
    principal = await authenticate(request, services)
    tenant = request_tenant(request, principal)
    raw = await read_body(request, services.config.server.max_request_bytes)
    parsed = parse_body(raw, MemorySearchIn)[1]
    user = _required_user(memory_user(request, parsed.user, principal))
    namespace = parsed.namespace or scope_header(request, NAMESPACE_HEADER)
    scope = MemoryScope(tenant, user, namespace)
    as_of = parse_time(parsed.as_of) if parsed.as_of else None
    async with _store_errors():
        results = await _service(services).search(
            scope, parsed.query, parsed.top_k, _policy(services, tenant), now=as_of
        )
    return json_response(
        {
            "object": "list",
            "data": [
                {
                    **scored.record.to_api(),
                    "score": scored.score,
                    "dense_score": round(scored.dense, 4),
                    "keyword_score": round(scored.keyword, 4),
                    # P(evidence for the query), calibrated: what the floors compare.
                    "relevance": scored.relevance,
                }
                for scored in results
            ],
        }
    )
