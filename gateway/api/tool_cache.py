"""The agents' tool-result cache: `POST /v1/tool-cache/lookup`, `PUT /v1/tool-cache`,
`DELETE /v1/tool-cache`, `POST /v1/tool-cache/key` (README, "Tool-result cache for
agents").

Scope: the tenant is the API key's (an admin key names it with `x-gateway-tenant`),
the namespace `x-gateway-namespace` or the body's `namespace` (none: the default one).
Results are never logged.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Request, Response

from gateway.api.cache_headers import request_cache_control
from gateway.api.deps import AppServices, authenticate, read_body
from gateway.api.responses import json_response
from gateway.api.schemas import parse_body
from gateway.api.scope import NAMESPACE_HEADER, checked_identifier, request_tenant, scope_header
from gateway.api.tool_cache_schemas import DeleteIn, LookupIn, PutIn, ToolCallIn
from gateway.errors import (
    InvalidRequest,
    StoreUnavailableResponse,
    ToolCacheDisabled,
    ToolCacheMiss,
    ToolResultRefused,
    ToolResultTooLarge,
)
from gateway.policy.tool_cache import ToolCachePolicy
from gateway.storage.protocols import StoreUnavailable
from gateway.toolcache.keys import (
    ArgumentKeysCollide,
    ToolCall,
    canonical_json,
    text,
    tool_cache_key,
)
from gateway.toolcache.records import ToolCacheFilter
from gateway.toolcache.service import ToolResult, ToolResultIsError, ToolResultTooBig
from gateway.toolcache.stats import LookupOutcome
from gateway.wiring import Services

router = APIRouter()

CACHE_HEADER = "x-gateway-cache"
KEY_HEADER = "x-gateway-tool-cache-key"


def _namespace(request: Request, body_namespace: str | None) -> str | None:
    header = scope_header(request, NAMESPACE_HEADER)
    if body_namespace is not None:
        checked_identifier(body_namespace, "namespace")
    if header is not None and body_namespace is not None and header != body_namespace:
        raise InvalidRequest(
            f"'{NAMESPACE_HEADER}' and the body's 'namespace' name different namespaces.",
            param="namespace",
            code="conflicting_namespace",
        )
    return header or body_namespace


def _policy(services: Services, tenant: str) -> ToolCachePolicy:
    policy = services.policies.resolve(tenant, "").tool_cache
    if not policy.enabled:
        raise ToolCacheDisabled("The tool-result cache is turned off for this tenant.")
    return policy


async def _parsed(
    request: Request, services: Services, schema: type[Any]
) -> tuple[str, dict[str, Any], Any]:
    tenant = request_tenant(request, await authenticate(request, services))
    raw = await read_body(request, services.config.server.max_request_bytes)
    body, model = parse_body(raw, schema)
    return tenant, body, model


def _call(request: Request, tenant: str, body: dict[str, Any], model: ToolCallIn) -> ToolCall:
    tool = text(model.tool)
    if not tool:
        raise InvalidRequest("'tool' must not be blank.", param="tool")
    try:
        # Built from the orjson-parsed body: the arguments exactly as JSON gave them.
        call = ToolCall(
            tenant=tenant,
            namespace=text(_namespace(request, model.namespace) or ""),
            tool=tool,
            method=text(model.method),
            target=text(model.target),
            arguments=body.get("arguments"),
            schema_version=text(model.schema_version),
        )
        canonical_json(call)
    except ArgumentKeysCollide:
        raise InvalidRequest(
            "Two keys of 'arguments' are the same once NFC-normalised.", param="arguments"
        ) from None
    return call


def _max_age(
    request: Request, services: Services, tenant: str, asked: float | None
) -> float | None:
    """The stricter of the body's `max_age_seconds` and `Cache-Control: max-age`."""
    control = request_cache_control(request)
    ages = [asked] if asked is not None else []
    if control.max_age_seconds is not None and (
        services.policies.resolve(tenant, "").cache_control.honour_max_age
    ):
        ages.append(float(control.max_age_seconds))
    return min(ages) if ages else None


@router.post("/v1/tool-cache/lookup")
async def lookup(request: Request, services: AppServices) -> Response:
    tenant, body, model = await _parsed(request, services, LookupIn)
    _policy(services, tenant)
    call = _call(request, tenant, body, model)
    max_age_seconds = _max_age(request, services, tenant, model.max_age_seconds)
    found = await services.tool_cache.lookup(call, max_age_seconds)
    headers = {KEY_HEADER: found.key}
    entry = found.entry
    if entry is None:
        why = {
            LookupOutcome.STALE: "the stored result is older than the lookup's max age",
            LookupOutcome.ERROR: "the tool cache is unavailable",
        }.get(found.outcome, "nothing is stored under this key")
        raise ToolCacheMiss(
            f"No cached result for this tool call ({why}).",
            headers={**headers, CACHE_HEADER: "miss"},
        )
    age_seconds = max(0.0, services.tool_cache.now() - entry.stored_at)
    payload = {
        "object": "tool_cache.hit",
        "key": entry.key,
        "result": orjson.Fragment(entry.result),
        "stored_at": entry.stored_at,
        "expires_at": entry.expires_at,
        "age_seconds": round(age_seconds, 3),
    }
    headers.update({CACHE_HEADER: "hit", "age": str(int(age_seconds))})
    return json_response(payload, headers=headers)


@router.put("/v1/tool-cache", status_code=201)
async def put(request: Request, services: AppServices) -> Response:
    tenant, body, model = await _parsed(request, services, PutIn)
    policy = _policy(services, tenant)
    call = _call(request, tenant, body, model)
    ttl_seconds = policy.default_ttl_seconds if model.ttl_seconds is None else model.ttl_seconds
    if ttl_seconds > policy.max_ttl_seconds:
        raise InvalidRequest(
            f"'ttl_seconds' may be at most {policy.max_ttl_seconds} (tool_cache.max_ttl_seconds).",
            param="ttl_seconds",
            code="invalid_ttl",
        )
    result = ToolResult(
        result=body.get("result"),
        result_json=orjson.dumps(body.get("result")),
        status=model.status,
        is_error=model.is_error,
    )
    try:
        entry = await services.tool_cache.put(call, result, ttl_seconds, policy)
    except ToolResultIsError as refused:
        raise ToolResultRefused(
            f"Error results are never cached ({refused.reason}); nothing was stored.",
            param="result",
        ) from None
    except ToolResultTooBig as big:
        raise ToolResultTooLarge(
            f"The result is {big.size_bytes} bytes; at most {big.max_bytes} are cached "
            "(tool_cache.max_result_bytes). Nothing was stored.",
            param="result",
        ) from None
    except StoreUnavailable:
        raise StoreUnavailableResponse("The tool cache is unavailable; retry shortly.") from None
    return json_response(
        {
            "object": "tool_cache.entry",
            "key": entry.key,
            "stored_at": entry.stored_at,
            "expires_at": entry.expires_at,
            "ttl_seconds": ttl_seconds,
            "size_bytes": entry.size_bytes,
        },
        status=201,
        headers={KEY_HEADER: entry.key},
    )


@router.delete("/v1/tool-cache")
async def delete(request: Request, services: AppServices) -> Response:
    tenant, _body, model = await _parsed(request, services, DeleteIn)
    namespace = _namespace(request, model.namespace)
    tool_filter = ToolCacheFilter(
        tenant=tenant,
        namespace=None if namespace is None else text(namespace),
        tool=None if model.tool is None else text(model.tool),
        method=None if model.method is None else text(model.method),
        target_prefix=None if model.target_prefix is None else text(model.target_prefix),
    )
    try:
        deleted = await services.tool_cache.delete(tool_filter)
    except StoreUnavailable:
        raise StoreUnavailableResponse("The tool cache is unavailable; retry shortly.") from None
    return json_response({"object": "tool_cache.deleted", "deleted": deleted})


@router.post("/v1/tool-cache/key")
async def key(request: Request, services: AppServices) -> Response:
    """The key a lookup or put of this call uses, and the canonical JSON it hashes."""
    tenant, body, model = await _parsed(request, services, ToolCallIn)
    call = _call(request, tenant, body, model)
    canonical = canonical_json(call)
    return json_response(
        {
            "object": "tool_cache.key",
            "key": tool_cache_key(call),
            "canonical": canonical.decode(),
        }
    )
