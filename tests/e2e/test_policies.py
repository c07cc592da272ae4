"""Policies edited live: an edit changes behaviour within seconds, without a restart; a
broken edit is rejected, explained and harmless; bumping a declared version retires
cached answers for that tenant only."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.helpers import client_for, gateway_with_policies, unique_prompt
from tests.helpers import ADMIN_KEY, GatewayFactory, RunningGateway


def _start(start_gateway: GatewayFactory, tmp_path: Path) -> tuple[RunningGateway, Path]:
    return gateway_with_policies(
        start_gateway, tmp_path, {"default.yaml": 'version: "1"\n'}, policy_reload_seconds=0.1
    )


def _cache(gateway: RunningGateway, prompt: str, tenant: str = "acme") -> tuple[str, str | None]:
    raw = client_for(gateway, tenant).chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": prompt}]
    )
    return raw.headers["x-gateway-cache"], raw.headers.get("x-gateway-cache-reason")


def _admin(gateway: RunningGateway, method: str, path: str) -> httpx.Response:
    return httpx.request(
        method, f"{gateway.url}{path}", headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=10
    )


def _eventually(check: Callable[[], Any], seconds: float = 5.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "the policy change did not take effect"
        time.sleep(0.05)


def test_an_edit_takes_effect_without_restart(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    gateway, policies = _start(start_gateway, tmp_path)
    prompt = unique_prompt("What is the tallest mountain in Europe?")
    _cache(gateway, prompt)
    assert _cache(gateway, prompt) == ("exact", None)

    (policies / "tenant.acme.yaml").write_text(
        "exact_cache: {enabled: false}\nsemantic_cache: {enabled: false}\n"
    )
    started = time.monotonic()
    _eventually(lambda: _cache(gateway, prompt) == ("bypass", "policy_disabled"))
    assert time.monotonic() - started < 5
    # Another tenant keeps the default.
    other = unique_prompt("What is the tallest mountain in Asia?")
    _cache(gateway, other, tenant="globex")
    assert _cache(gateway, other, tenant="globex") == ("exact", None)

    status = _admin(gateway, "GET", "/admin/policies").json()
    assert {entry["file"] for entry in status["files"]} >= {"default.yaml", "tenant.acme.yaml"}
    assert status["last_error"] is None


def test_a_broken_edit_is_rejected_explained_and_harmless(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    gateway, policies = _start(start_gateway, tmp_path)
    prompt = unique_prompt("What is the chemical symbol for gold?")
    _cache(gateway, prompt)
    (policies / "default.yaml").write_text('version: "1"\nsemantic_cache:\n  accept_threshold: 7\n')

    def failing() -> dict[str, Any] | None:
        status: dict[str, Any] = _admin(gateway, "GET", "/admin/policies").json()
        return status if status["last_error"] else None

    status = _eventually(failing)
    message = " ".join(status["last_error"])
    assert "default.yaml:3" in message and "semantic_cache.accept_threshold" in message
    # The previous policy is still in force: caching works as before.
    assert _cache(gateway, prompt) == ("exact", None)
    reload = _admin(gateway, "POST", "/admin/policies/reload")
    assert reload.status_code == 422 and reload.json()["ok"] is False
    metrics = _admin(gateway, "GET", "/metrics").text
    assert "gateway_policy_reload_failing 1.0" in metrics
    assert "gateway_policy_reload_errors_total" in metrics

    (policies / "default.yaml").write_text('version: "1"\n')
    _eventually(lambda: not _admin(gateway, "GET", "/admin/policies").json()["last_error"])
    assert "gateway_policy_reload_failing 0.0" in _admin(gateway, "GET", "/metrics").text


def test_bumping_tool_schema_version_retires_that_tenants_answers(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    gateway, policies = _start(start_gateway, tmp_path)
    prompt = unique_prompt("What is the boiling point of water at sea level?")
    for tenant in ("acme", "globex"):
        _cache(gateway, prompt, tenant)
        assert _cache(gateway, prompt, tenant) == ("exact", None)
    (policies / "tenant.acme.yaml").write_text('tool_schema_version: "2"\n')
    _eventually(lambda: _cache(gateway, prompt) == ("miss", "no_candidate"))
    assert _cache(gateway, prompt) == ("exact", None)  # stored again under version 2
    assert _cache(gateway, prompt, "globex") == ("exact", None)
