"""The tool-result cache for agents over HTTP, on both storage backends: put and
lookup by canonical key, misses, TTL expiry, read-time freshness, delete by prefix,
refused error results, size caps and eviction, tenant isolation, and the counters."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.helpers import gateway_with_policies
from tests.helpers import ADMIN_KEY, TENANT_KEYS, GatewayFactory, RunningGateway


def _api(
    gateway: RunningGateway, method: str, path: str, tenant: str = "acme", **kwargs: Any
) -> httpx.Response:
    headers = {"authorization": f"Bearer {TENANT_KEYS[tenant]}", **kwargs.pop("headers", {})}
    return httpx.request(
        method, f"{gateway.base_url}/tool-cache{path}", headers=headers, timeout=30, **kwargs
    )


def _call(**fields: Any) -> dict[str, Any]:
    call: dict[str, Any] = {
        "tool": "search",
        "method": "query",
        "target": "https://api.example.com/v1/search",
        "arguments": {"q": f"refund policy {uuid.uuid4().hex[:8]}", "limit": 10},
        "schema_version": "1",
    }
    call.update(fields)
    return call


def _put(
    gateway: RunningGateway, call: dict[str, Any], result: Any, tenant: str = "acme", **extra: Any
) -> httpx.Response:
    return _api(gateway, "PUT", "", tenant=tenant, json={**call, "result": result, **extra})


def _lookup(gateway: RunningGateway, call: dict[str, Any], **kwargs: Any) -> httpx.Response:
    return _api(gateway, "POST", "/lookup", json=call, **kwargs)


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code and error["type"] and error["message"]
    return str(error["message"])


def _admin(gateway: RunningGateway, path: str) -> httpx.Response:
    return httpx.get(
        f"{gateway.url}{path}", headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=10
    )


def _metric(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if not (line.startswith(name + "{") or line.startswith(name + " ")):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
        if all(found.get(key) == value for key, value in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_put_then_lookup_hits_by_canonical_key(gateway: RunningGateway) -> None:
    call = _call(arguments={"q": "refund policy", "limit": 10, "filters": {"lang": "en"}})
    result = {"hits": [{"title": "Refunds", "score": 0.93}], "total": 1}
    stored = _put(gateway, call, result, ttl_seconds=120)
    assert stored.status_code == 201, stored.text
    put_key = stored.json()["key"]
    assert stored.json()["ttl_seconds"] == 120 and stored.json()["size_bytes"] > 0

    # The same call spelt differently: key order, whitespace, 10.0, padded strings.
    respelt = {
        **call,
        "tool": " search ",
        "arguments": {"filters": {"lang": "en "}, "limit": 10.0, "q": "refund policy"},
    }
    hit = _lookup(gateway, respelt)
    assert hit.status_code == 200, hit.text
    body = hit.json()
    assert body["result"] == result and body["key"] == put_key
    assert 0 <= body["age_seconds"] < 60 and body["expires_at"] > body["stored_at"]
    assert hit.headers["x-gateway-cache"] == "hit"
    without_v1 = httpx.post(
        f"{gateway.url}/tool-cache/lookup",
        json=respelt,
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
    )
    assert without_v1.json()["key"] == put_key
    shown = _api(gateway, "POST", "/key", json=respelt).json()
    assert shown["key"] == put_key and '"limit":10' in shown["canonical"]

    for different in (
        {**call, "arguments": {**call["arguments"], "limit": 11}},
        {**call, "schema_version": "2"},
        {**call, "target": "https://api.example.com/v2/search"},
        {**call, "namespace": "agent-b"},
    ):
        miss = _lookup(gateway, different)
        _error(miss, 404, "tool_cache_miss")
        assert miss.headers["x-gateway-cache"] == "miss"

    # A string result, and a put that replaces the earlier result of the key.
    assert _put(gateway, call, "plain text result").status_code == 201
    assert _lookup(gateway, call).json()["result"] == "plain text result"


def test_ttl_expiry_and_read_time_freshness(gateway: RunningGateway) -> None:
    short, kept = _call(), _call()
    assert _put(gateway, short, {"v": 1}, ttl_seconds=1).status_code == 201
    assert _put(gateway, kept, {"v": 2}, ttl_seconds=300).status_code == 201
    assert _lookup(gateway, short).status_code == 200
    time.sleep(1.3)
    _error(_lookup(gateway, short), 404, "tool_cache_miss")

    # Still stored, but older than the lookup accepts: the body's field or the header.
    message = _error(_lookup(gateway, {**kept, "max_age_seconds": 1}), 404, "tool_cache_miss")
    assert "max age" in message
    _error(_lookup(gateway, kept, headers={"cache-control": "max-age=1"}), 404, "tool_cache_miss")
    assert _lookup(gateway, {**kept, "max_age_seconds": 600}).status_code == 200
    assert _lookup(gateway, kept, headers={"cache-control": "max-age=600"}).status_code == 200


def test_delete_by_prefix_tool_and_namespace(gateway: RunningGateway) -> None:
    tag = uuid.uuid4().hex[:8]
    api_a = _call(target=f"https://api.example.com/{tag}/a")
    api_b = _call(target=f"https://api.example.com/{tag}/b", method="fetch")
    other = _call(target=f"https://other.example.com/{tag}")
    logs = _call(tool="logs", target=f"https://api.example.com/{tag}/c")
    scoped = _call(target=f"https://api.example.com/{tag}/d", namespace="agent-b")
    for call in (api_a, api_b, other, logs, scoped):
        assert _put(gateway, call, {"ok": True}).status_code == 201

    deleted = _api(
        gateway,
        "DELETE",
        "",
        json={"tool": "search", "target_prefix": f"https://api.example.com/{tag}/"},
    )
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["deleted"] == 3  # api_a, api_b and the namespaced one
    for gone in (api_a, api_b, scoped):
        _error(_lookup(gateway, gone), 404, "tool_cache_miss")
    for kept in (other, logs):
        assert _lookup(gateway, kept).status_code == 200

    assert _put(gateway, scoped, {"ok": True}).status_code == 201
    by_namespace = _api(
        gateway, "DELETE", "", json={"all": True}, headers={"x-gateway-namespace": "agent-b"}
    )
    assert by_namespace.json()["deleted"] == 1
    assert _lookup(gateway, other).status_code == 200
    assert _api(gateway, "DELETE", "", json={"tool": "logs"}).json()["deleted"] == 1
    _error(_api(gateway, "DELETE", "", json={}), 400, "invalid_request")


def test_error_results_are_refused_and_counted(gateway: RunningGateway) -> None:
    call = _call()
    for extra in (
        {"status": 503},
        {"status": 404},
        {"is_error": True},
    ):
        _error(_put(gateway, call, {"items": []}, **extra), 422, "tool_result_is_error")
    for flagged in ({"isError": True, "content": []}, {"error": {"code": -32000}}):
        _error(_put(gateway, call, flagged), 422, "tool_result_is_error")
    _error(_lookup(gateway, call), 404, "tool_cache_miss")
    # A 2xx with an explicit `error: null` is not an error.
    assert _put(gateway, call, {"error": None, "items": []}, status=200).status_code == 201

    stats = _admin(gateway, "/admin/stats").json()["tool_cache"]["by_tenant"]["acme"]
    assert stats["puts"]["refused_error"] == 5 and stats["puts"]["stored"] == 1
    metrics = _admin(gateway, "/metrics").text
    assert (
        _metric(metrics, "gateway_tool_cache_puts_total", tenant="acme", outcome="refused_error")
        == 5
    )


def test_tenants_never_share_entries(gateway: RunningGateway) -> None:
    call = _call()
    assert _put(gateway, call, {"secret": "acme's"}).status_code == 201
    _error(_lookup(gateway, call, tenant="globex"), 404, "tool_cache_miss")
    everything = _api(gateway, "DELETE", "", tenant="globex", json={"all": True})
    assert everything.json()["deleted"] == 0
    assert _lookup(gateway, call).json()["result"] == {"secret": "acme's"}
    # An admin key acts for the tenant it names, and must name one.
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}
    as_admin = httpx.post(
        f"{gateway.base_url}/tool-cache/lookup",
        json=call,
        headers={**admin, "x-gateway-tenant": "acme"},
    )
    assert as_admin.json()["result"] == {"secret": "acme's"}
    unnamed = httpx.post(f"{gateway.base_url}/tool-cache/lookup", json=call, headers=admin)
    _error(unnamed, 400, "tenant_required")
    # A tenant key cannot name another tenant.
    forbidden = _lookup(gateway, call, tenant="globex", headers={"x-gateway-tenant": "acme"})
    _error(forbidden, 403, "forbidden")


def test_hits_and_misses_are_counted(gateway: RunningGateway) -> None:
    call = _call()
    _error(_lookup(gateway, call), 404, "tool_cache_miss")
    _put(gateway, call, [1, 2, 3])
    _lookup(gateway, call)
    _lookup(gateway, call)
    stats = _admin(gateway, "/admin/stats").json()["tool_cache"]
    assert stats["by_tenant"]["acme"]["lookups"]["hit"] == 2
    assert stats["by_tenant"]["acme"]["lookups"]["miss"] == 1
    assert stats["lookups"]["hit"] == 2 and stats["hit_rate"] == round(2 / 3, 4)
    metrics = _admin(gateway, "/metrics").text
    assert _metric(metrics, "gateway_tool_cache_lookups_total", tenant="acme", outcome="hit") == 2
    assert _metric(metrics, "gateway_tool_cache_lookups_total", tenant="acme", outcome="miss") == 1


def test_agent_loop_calls_each_distinct_tool_call_once(gateway: RunningGateway) -> None:
    calls_made: list[str] = []

    def search_tool(query: str) -> dict[str, Any]:
        calls_made.append(query)
        return {"query": query, "hits": [query.upper()]}

    def cached(tool: Callable[[str], dict[str, Any]], query: str) -> dict[str, Any]:
        call = {"tool": "search", "target": "kb-index", "arguments": {"query": query}}
        found = _lookup(gateway, {**call, "max_age_seconds": 300})
        if found.status_code == 200:
            result: dict[str, Any] = found.json()["result"]
            return result
        assert found.json()["error"]["code"] == "tool_cache_miss"
        result = tool(query)
        assert _put(gateway, call, result, ttl_seconds=600).status_code == 201
        return result

    tag = uuid.uuid4().hex[:6]
    plan = [f"{tag} alpha", f"{tag} beta", f"{tag} alpha", f"{tag} beta", f"{tag} gamma"]
    answers = [cached(search_tool, query) for query in plan]
    assert calls_made == [f"{tag} alpha", f"{tag} beta", f"{tag} gamma"]
    assert answers[2] == answers[0] == {"query": f"{tag} alpha", "hits": [f"{tag} alpha".upper()]}


def test_policy_caps_ttl_and_result_size_and_capacity_evicts(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    policy = (
        "tool_cache:\n  default_ttl_seconds: 30\n  max_ttl_seconds: 60\n  max_result_bytes: 2048\n"
    )
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"default.yaml": policy, "tenant.globex.yaml": "tool_cache:\n  enabled: false\n"},
        capacity={"tool_cache": {"max_entries_per_tenant": 2}},
    )
    call = _call()
    default_ttl = _put(gateway, call, {"ok": 1})
    assert default_ttl.json()["ttl_seconds"] == 30
    _error(_put(gateway, call, {"ok": 1}, ttl_seconds=61), 400, "invalid_ttl")
    message = _error(_put(gateway, _call(), "x" * 3000), 413, "tool_result_too_large")
    assert "max_result_bytes" in message

    # Per-tenant cap of 2: the least recently used entry goes first.
    first, second, third = call, _call(), _call()
    assert _put(gateway, second, {"n": 2}).status_code == 201
    assert _lookup(gateway, first).status_code == 200  # first becomes the most recent
    assert _put(gateway, third, {"n": 3}).status_code == 201
    _error(_lookup(gateway, second), 404, "tool_cache_miss")
    assert _lookup(gateway, first).status_code == 200
    assert _lookup(gateway, third).status_code == 200
    # globex's policy turns the cache off; deleting still works.
    _error(_put(gateway, _call(), {"n": 4}, tenant="globex"), 403, "tool_cache_disabled")
    _error(_lookup(gateway, first, tenant="globex"), 403, "tool_cache_disabled")
    assert _api(gateway, "DELETE", "", tenant="globex", json={"all": True}).status_code == 200
    capacity = _admin(gateway, "/admin/stats").json()["capacity"]["stores"]["tool_cache"]
    assert capacity["evictions"]["tenant_capacity"] == 1
    assert capacity["limits"]["max_entries_per_tenant"] == 2


def test_bad_requests_get_clear_errors(gateway: RunningGateway) -> None:
    _error(_lookup(gateway, {"arguments": {}}), 400, "invalid_request")
    _error(_lookup(gateway, {"tool": "   "}), 400, "invalid_request")
    _error(_put(gateway, {"tool": "t"}, None, status=99), 400, "invalid_request")
    missing_result = _api(gateway, "PUT", "", json={"tool": "t"})
    assert "result" in _error(missing_result, 400, "invalid_request")
    colliding = {"tool": "t", "arguments": {"e\u0301": 1, "\u00e9": 2}}
    _error(_lookup(gateway, colliding), 400, "invalid_request")
    conflicting = _lookup(
        gateway, {"tool": "t", "namespace": "a"}, headers={"x-gateway-namespace": "b"}
    )
    _error(conflicting, 400, "conflicting_namespace")
    unauthenticated = httpx.post(f"{gateway.base_url}/tool-cache/lookup", json={"tool": "t"})
    assert unauthenticated.status_code == 401
