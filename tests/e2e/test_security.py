"""Isolation and exposure probed end to end: tenants never see each other's cached
answers, memories, decision records or metrics; keys may be configured hashed; CORS is
off unless configured; error bodies never echo a key."""

from __future__ import annotations

import uuid

import httpx

from gateway.auth import hashed_key
from tests.e2e.helpers import client_for
from tests.helpers import ADMIN_KEY, TENANT_KEYS, GatewayFactory, RunningGateway

SYSTEM = {"role": "system", "content": "You are a concise geography tutor."}


def _chat(gateway: RunningGateway, text: str, key: str) -> httpx.Response:
    return httpx.post(
        f"{gateway.base_url}/chat/completions",
        headers={"authorization": f"Bearer {key}"},
        json={"model": "fake-model", "messages": [SYSTEM, {"role": "user", "content": text}]},
        timeout=30,
    )


def _layer(gateway: RunningGateway, text: str, key: str) -> str:
    return _chat(gateway, text, key).headers["x-gateway-cache"]


def test_a_tenant_reaches_nothing_of_another_tenant(gateway: RunningGateway) -> None:
    acme, globex = TENANT_KEYS["acme"], TENANT_KEYS["globex"]
    # Cached answers, exact and semantic: each globex question is asked once, first.
    _chat(gateway, "How do I sort a list in Python?", acme)
    _chat(gateway, "How do I reverse a string in Python?", acme)
    assert _layer(gateway, "How do I sort a list in Python?", acme) == "exact"
    assert _layer(gateway, "How can I reverse a string in Python?", acme) == "semantic"
    assert _layer(gateway, "How do I sort a list in Python?", globex) == "miss"
    assert _layer(gateway, "How can I reverse a string in Python?", globex) == "miss"
    # Memories, through the API and through injection.
    user = f"shared-name-{uuid.uuid4().hex[:6]}"
    fact = "The vault combination hint is the heron."
    created = httpx.post(
        f"{gateway.base_url}/memories",
        headers={"authorization": f"Bearer {acme}"},
        json={"user": user, "content": fact},
        timeout=30,
    )
    assert created.status_code == 201
    listed = httpx.get(
        f"{gateway.base_url}/memories",
        headers={"authorization": f"Bearer {globex}", "x-gateway-user": user},
        timeout=30,
    )
    assert listed.json()["data"] == []
    raw = client_for(gateway, "globex").chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[{"role": "user", "content": "What is the vault combination hint heron?"}],
        extra_headers={"x-gateway-user": user},
    )
    assert raw.headers["x-gateway-memory-tokens"] == "0"
    # Decision records and metrics (tenant names are labels) are admin-only.
    for path in ("/admin/decisions", "/admin/stats", "/metrics"):
        response = httpx.get(
            f"{gateway.url}{path}", headers={"authorization": f"Bearer {globex}"}, timeout=10
        )
        assert response.status_code == 403
        assert "acme" not in response.text


def test_error_bodies_never_echo_a_key(gateway: RunningGateway) -> None:
    guessed = "sk-guessed-" + uuid.uuid4().hex
    response = _chat(gateway, "hello there", guessed)
    assert response.status_code == 401
    assert guessed not in response.text and guessed[:12] not in response.text
    almost = TENANT_KEYS["acme"] + "x"
    response = _chat(gateway, "hello there", almost)
    assert response.status_code == 401 and almost not in response.text


def test_keys_can_be_configured_hashed(start_gateway: GatewayFactory) -> None:
    tenant_key, admin_key = "sk-hashed-tenant-1", "sk-hashed-admin-1"
    gateway = start_gateway(
        auth={
            "tenants": [{"name": "acme", "api_keys": [hashed_key(tenant_key)]}],
            "admin_keys": [hashed_key(admin_key)],
        }
    )
    assert _chat(gateway, "hello there", tenant_key).status_code == 200
    assert _chat(gateway, "hello there", hashed_key(tenant_key)).status_code == 401
    stats = httpx.get(
        f"{gateway.url}/admin/stats", headers={"authorization": f"Bearer {admin_key}"}, timeout=10
    )
    assert stats.status_code == 200


def test_cors_is_off_by_default_and_exact_when_configured(start_gateway: GatewayFactory) -> None:
    preflight = {
        "origin": "https://evil.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type",
    }
    closed = start_gateway()
    response = httpx.options(f"{closed.base_url}/chat/completions", headers=preflight, timeout=10)
    assert "access-control-allow-origin" not in response.headers
    simple = _chat(closed, "hello there", TENANT_KEYS["acme"])
    assert "access-control-allow-origin" not in simple.headers

    opened = start_gateway(server={"cors_allow_origins": ["https://app.example"]})
    allowed = httpx.options(
        f"{opened.base_url}/chat/completions",
        headers={**preflight, "origin": "https://app.example"},
        timeout=10,
    )
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"
    refused = httpx.options(f"{opened.base_url}/chat/completions", headers=preflight, timeout=10)
    assert "access-control-allow-origin" not in refused.headers
    assert ADMIN_KEY not in refused.text
