"""The knowledge API: `POST/GET /v1/knowledge`, `GET/DELETE /v1/knowledge/{id}`,
`DELETE /v1/knowledge?document_id=...` (a whole document) and
`POST /v1/knowledge/search`.

A tenant's knowledge is shared by all its users: any key of the tenant reads it; only
admin keys write it (naming the tenant with `x-gateway-tenant`), unless the tenant's
policy says `knowledge.writers: any_key`. An item of another tenant answers 404,
exactly like one that does not exist. The namespace comes from the body's `namespace`
or `x-gateway-namespace`; items without one are seen in every namespace.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Request, Response

from gateway.api.deps import AppServices, authenticate, bounded_int_param, read_body
from gateway.api.knowledge_schemas import KnowledgeSearchIn, KnowledgeWriteIn
from gateway.api.responses import json_response
from gateway.api.schemas import parse_body
from gateway.api.scope import NAMESPACE_HEADER, checked_identifier, request_tenant, scope_header
from gateway.errors import (
    Forbidden,
    InvalidRequest,
    KnowledgeItemTooLarge,
    KnowledgeLimitReached,
    KnowledgeNotFound,
    KnowledgeRejectedResponse,
    StoreUnavailableResponse,
)
from gateway.knowledge import service as knowledge_service
from gateway.knowledge.records import KnowledgeRecord, KnowledgeScope
from gateway.knowledge.service import KnowledgeBatch, NewKnowledge
from gateway.policy.models import Policy
from gateway.storage.protocols import QuotaExceeded, StoreUnavailable
from gateway.wiring import Services

router = APIRouter()

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


@asynccontextmanager
async def _store_errors() -> AsyncIterator[None]:
    try:
        yield
    except StoreUnavailable:
        raise StoreUnavailableResponse(
            "The knowledge store is unavailable; retry shortly."
        ) from None


async def _reader(request: Request, services: Services) -> str:
    return request_tenant(request, await authenticate(request, services))


async def _writer(request: Request, services: Services) -> tuple[str, Policy]:
    """The tenant a write acts for, once the key may write its knowledge."""
    principal = await authenticate(request, services)
    tenant = request_tenant(request, principal)
    policy = services.policies.resolve(tenant, "")
    # A gateway with no tenants and no admin keys is open (local use), writes included.
    unguarded = services.keys.open and not services.config.auth.admin_keys
    if not (principal.is_admin or unguarded or policy.knowledge.writers == "any_key"):
        raise Forbidden(
            "Only admin keys may change the knowledge base (policy knowledge.writers: admin)."
        )
    return tenant, policy


def _namespace(request: Request, body_namespace: str | None) -> str | None:
    header = scope_header(request, NAMESPACE_HEADER)
    if body_namespace is not None:
        checked_identifier(body_namespace, "namespace")
        if header is not None and header != body_namespace:
            raise InvalidRequest(
                f"'{NAMESPACE_HEADER}' and the body's 'namespace' differ.", param="namespace"
            )
        return body_namespace
    return header


@router.post("/v1/knowledge", status_code=201)
async def add_knowledge(request: Request, services: AppServices) -> Response:
    tenant, policy = await _writer(request, services)
    raw = await read_body(request, services.config.server.max_request_bytes)
    parsed = parse_body(raw, KnowledgeWriteIn)[1]
    batch = KnowledgeBatch(
        scope=KnowledgeScope(tenant, _namespace(request, parsed.namespace)),
        items=[
            NewKnowledge(item.content, item.title, item.source, item.metadata)
            for item in parsed.items or ()
        ],
        text=parsed.content,
        title=parsed.title,
        source=parsed.source,
        metadata=parsed.metadata,
        document_id=parsed.document_id,
    )
    try:
        async with _store_errors():
            records = await services.knowledge.add(batch, policy.knowledge)
    except knowledge_service.KnowledgeRejected as refused:
        raise KnowledgeRejectedResponse(
            f"{_item_name(parsed, refused.index)} refused: {refused.verdict.message} "
            f"(reason: {refused.verdict.kind}, rule: {refused.verdict.rule}). "
            "Nothing was stored.",
            param=_item_name(parsed, refused.index),
        ) from None
    except knowledge_service.KnowledgeItemTooLarge as large:
        raise KnowledgeItemTooLarge(
            f"{_item_name(parsed, large.index)} takes {large.size_bytes} bytes; the limit "
            f"is {large.cap_bytes} (knowledge.limits.max_bytes_per_item). Nothing was stored.",
            param=_item_name(parsed, large.index),
        ) from None
    except QuotaExceeded as exceeded:
        raise KnowledgeLimitReached(
            f"Knowledge limit reached: the tenant has {exceeded.used} items and this write "
            f"adds {exceeded.adding}; the limit is {exceeded.cap} "
            "(knowledge.limits.max_items_per_tenant). Nothing was stored.",
            param="items" if parsed.items is not None else "content",
        ) from None
    return json_response(
        {"object": "list", "data": [record.to_api() for record in records]}, status=201
    )


def _item_name(parsed: KnowledgeWriteIn, index: int) -> str:
    return f"items[{index}].content" if parsed.items is not None else f"content (chunk {index})"


@router.get("/v1/knowledge")
async def list_knowledge(request: Request, services: AppServices) -> Response:
    tenant = await _reader(request, services)
    namespace = request.query_params.get("namespace") or scope_header(request, NAMESPACE_HEADER)
    document_id = request.query_params.get("document_id")
    limit = bounded_int_param(request, "limit", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
    offset = bounded_int_param(request, "offset", 0, 0, 10**9)
    async with _store_errors():
        page = await services.knowledge.store.list_page(
            tenant, namespace, document_id, limit, offset
        )
    body: dict[str, Any] = {
        "object": "list",
        "data": [record.to_api() for record in page.records],
        "has_more": page.has_more,
    }
    if page.has_more:
        body["next_offset"] = offset + len(page.records)
    return json_response(body)


async def _found(services: Services, tenant: str, item_id: str) -> KnowledgeRecord:
    async with _store_errors():
        record = await services.knowledge.store.get(tenant, item_id)
    if record is None:
        raise KnowledgeNotFound(f"No knowledge item '{item_id}'.", param="id")
    return record


@router.get("/v1/knowledge/{item_id}")
async def get_knowledge(request: Request, services: AppServices, item_id: str) -> Response:
    record = await _found(services, await _reader(request, services), item_id)
    return json_response(record.to_api())


@router.delete("/v1/knowledge/{item_id}")
async def delete_knowledge(request: Request, services: AppServices, item_id: str) -> Response:
    tenant, _ = await _writer(request, services)
    async with _store_errors():
        deleted = await services.knowledge.store.delete(tenant, item_id)
    if not deleted:
        raise KnowledgeNotFound(f"No knowledge item '{item_id}'.", param="id")
    return json_response({"id": item_id, "object": "knowledge.item.deleted", "deleted": True})


@router.delete("/v1/knowledge")
async def delete_document(request: Request, services: AppServices) -> Response:
    tenant, _ = await _writer(request, services)
    document_id = request.query_params.get("document_id")
    if not document_id:
        raise InvalidRequest(
            "Name the document to delete with '?document_id=...'.",
            param="document_id",
            code="document_id_required",
        )
    async with _store_errors():
        ids = await services.knowledge.store.delete_document(tenant, document_id)
    if not ids:
        raise KnowledgeNotFound(f"No knowledge document '{document_id}'.", param="document_id")
    return json_response(
        {
            "document_id": document_id,
            "object": "knowledge.document.deleted",
            "deleted": True,
            "ids": sorted(ids),
        }
    )


@router.post("/v1/knowledge/search")
async def search_knowledge(request: Request, services: AppServices) -> Response:
    tenant = await _reader(request, services)
    raw = await read_body(request, services.config.server.max_request_bytes)
    parsed = parse_body(raw, KnowledgeSearchIn)[1]
    scope = KnowledgeScope(tenant, _namespace(request, parsed.namespace))
    memory_policy = services.policies.resolve(tenant, "").memory
    async with _store_errors():
        index = await services.knowledge.scope_index(scope)
        vector = None
        if index.size:
            vector = await services.memory.embed_query(
                parsed.query, memory_policy.embed_timeout_seconds
            )
        results = await services.knowledge.search(
            scope, parsed.query, parsed.top_k, memory_policy.ranking, vector, index=index
        )
    records = services.knowledge.cached_records(scope)
    return json_response(
        {
            "object": "list",
            "data": [
                {
                    **records[scored.record.id].to_api(),
                    "score": scored.score,
                    "dense_score": round(scored.dense, 4),
                    "keyword_score": round(scored.keyword, 4),
                }
                for scored in results
                if scored.record.id in records
            ],
        }
    )
