"""Admin API and metrics over HTTP: every request of a mixed run is explained once, in
`/admin/decisions` and in `/metrics`, with the reason codes the client saw; purges are
scoped; the false-hit audit samples hits without slowing them."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.helpers import client_for, gateway_with_policies, unique_prompt
from tests.helpers import ADMIN_KEY, TENANT_KEYS, GatewayFactory, RunningGateway

SYSTEM = {"role": "system", "content": "You are a concise geography tutor."}


def _admin(
    gateway: RunningGateway, method: str, path: str, key: str = ADMIN_KEY, **kw: Any
) -> httpx.Response:
    return httpx.request(
        method, f"{gateway.url}{path}", headers={"authorization": f"Bearer {key}"}, timeout=30, **kw
    )


def _chat(gateway: RunningGateway, text: str, tenant: str = "acme", **extra: Any) -> httpx.Headers:
    raw = client_for(gateway, tenant).chat.completions.with_raw_response.create(
        model="fake-model", messages=[SYSTEM, {"role": "user", "content": text}], **extra
    )
    raw.parse()
    return raw.headers


def _mixed_run(gateway: RunningGateway) -> list[httpx.Headers]:
    # Each test has a gateway (and data) of its own, so plain prompts start as misses.
    prompts = [
        unique_prompt("What is the capital of France?"),  # miss
        "How do I sort a list in Python?",  # miss
        "How can I sort a list in Python?",  # semantic
        "Cancel my subscription please",  # bypass: write intent
        "What is the weather in Paris today?",  # bypass: time sensitive
    ]
    seen = [_chat(gateway, text) for text in prompts]
    seen.append(_chat(gateway, prompts[0]))  # exact
    seen.append(_chat(gateway, prompts[0], tenant="globex"))  # miss: another tenant
    return seen


def test_admin_endpoints_need_an_admin_key(gateway: RunningGateway) -> None:
    for method, path in (
        ("GET", "/admin/stats"),
        ("GET", "/admin/decisions"),
        ("GET", "/admin/policies"),
        ("POST", "/admin/policies/reload"),
        ("POST", "/admin/cache/purge"),
        ("GET", "/metrics"),
    ):
        tenant = _admin(gateway, method, path, key=TENANT_KEYS["acme"])
        assert tenant.status_code == 403, (path, tenant.text)
        assert tenant.json()["error"]["code"] == "forbidden"
        anonymous = httpx.request(method, f"{gateway.url}{path}", timeout=10)
        assert anonymous.status_code == 401, (path, anonymous.text)


def test_every_request_is_explained_once(gateway: RunningGateway) -> None:
    seen = _mixed_run(gateway)
    wanted = {headers["x-request-id"] for headers in seen}
    # A record is written once the response is sent (after the body): wait for the last.
    deadline = time.monotonic() + 10
    while True:
        decisions = _admin(gateway, "GET", "/admin/decisions", params={"limit": 1000}).json()[
            "data"
        ]
        if wanted <= {record["request_id"] for record in decisions}:
            break
        assert time.monotonic() < deadline, "decision records missing"
        time.sleep(0.05)
    by_id: dict[str, list[dict[str, Any]]] = {}
    for record in decisions:
        by_id.setdefault(record["request_id"], []).append(record)
    layers = []
    for headers in seen:
        records = by_id.get(headers["x-request-id"], [])
        assert len(records) == 1, headers["x-request-id"]
        record = records[0]
        assert record["layer"] == headers["x-gateway-cache"]
        assert record["reason"] == headers.get("x-gateway-cache-reason"), record
        assert record["status"] == 200
        assert "prompt" not in record and "messages" not in str(record)
        layers.append(record["layer"])
    assert {"exact", "semantic", "miss", "bypass"} <= set(layers)

    metrics = _admin(gateway, "GET", "/metrics").text
    for layer, reason in {(r[0]["layer"], r[0]["reason"] or "") for r in by_id.values()}:
        counted = sum(
            float(value)
            for value in re.findall(
                rf'gateway_requests_total\{{[^}}]*layer="{layer}"[^}}]*'
                rf'reason="{reason}"[^}}]*\}} (\S+)',
                metrics,
            )
        )
        expected = sum(
            1 for r in decisions if r["layer"] == layer and (r["reason"] or "") == reason
        )
        assert counted == expected, (layer, reason)
    assert "gateway_stage_duration_seconds_bucket" in metrics
    assert "gateway_semantic_similarity_bucket" in metrics
    assert "gateway_tokens_saved_total" in metrics

    stats = _admin(gateway, "GET", "/admin/stats").json()
    assert stats["totals"]["requests"] == len(decisions)
    assert stats["totals"]["by_layer"]["exact"] >= 1
    assert stats["totals"]["tokens_saved"] > 0
    assert stats["timeline"]["buckets"]
    assert set(stats["latency_ms"]) >= {"exact", "semantic", "miss", "bypass"}


def test_purge_by_tenant_removes_only_that_tenants_entries(gateway: RunningGateway) -> None:
    prompt = unique_prompt("What is the longest river in Africa?")
    for tenant in ("acme", "globex"):
        _chat(gateway, prompt, tenant=tenant)
        assert _chat(gateway, prompt, tenant=tenant)["x-gateway-cache"] == "exact"
    purged = _admin(gateway, "POST", "/admin/cache/purge", json={"tenant": "acme"})
    assert purged.status_code == 200, purged.text
    counts = purged.json()["purged"]
    assert counts["exact"] >= 1 and counts["semantic"] >= 1
    assert _chat(gateway, prompt, tenant="acme")["x-gateway-cache"] == "miss"
    assert _chat(gateway, prompt, tenant="globex")["x-gateway-cache"] == "exact"


def test_purge_by_key_and_namespace(gateway: RunningGateway) -> None:
    prompt = unique_prompt("Which ocean is the deepest?")
    first = _chat(gateway, prompt, extra_headers={"x-gateway-namespace": "docs"})
    assert _chat(gateway, prompt)["x-gateway-cache"] == "miss"  # namespaces do not share
    assert (
        _chat(gateway, prompt, extra_headers={"x-gateway-namespace": "docs"})["x-gateway-cache"]
        == "exact"
    )
    record = next(
        r
        for r in _admin(gateway, "GET", "/admin/decisions").json()["data"]
        if r["request_id"] == first["x-request-id"]
    )
    assert record["cache_key"]
    purged = _admin(gateway, "POST", "/admin/cache/purge", json={"key": record["cache_key"]})
    assert purged.json()["purged"]["exact"] == 1
    assert (
        _chat(gateway, prompt, extra_headers={"x-gateway-namespace": "docs"})["x-gateway-cache"]
        == "miss"
    )
    assert _chat(gateway, prompt)["x-gateway-cache"] == "exact"  # the other namespace stays
    assert (
        _admin(gateway, "POST", "/admin/cache/purge", json={"namespace": "docs"}).json()["purged"][
            "exact"
        ]
        == 1
    )


@pytest.mark.parametrize("body", [{}, {"all": True, "tenant": "acme"}, {"tenant": 3}, {"x": 1}])
def test_bad_purge_requests_are_400(gateway: RunningGateway, body: dict[str, Any]) -> None:
    response = _admin(gateway, "POST", "/admin/cache/purge", json=body)
    assert response.status_code == 400, response.text


def test_the_audit_samples_hits_in_the_background(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    gateway, _ = gateway_with_policies(
        start_gateway, tmp_path, {"default.yaml": "audit:\n  sample_rate: 1.0\n"}
    )
    prompt = unique_prompt("Name the largest desert.")
    _chat(gateway, prompt)
    for _ in range(3):
        assert _chat(gateway, prompt)["x-gateway-cache"] == "exact"
    deadline = time.monotonic() + 10
    while True:
        audit = _admin(gateway, "GET", "/admin/stats").json()["audit"]
        if audit and audit[0]["sampled"] == 3:
            break
        assert time.monotonic() < deadline, audit
        time.sleep(0.1)
    (row,) = audit
    assert row["tenant"] == "acme" and row["layer"] == "exact"
    # The fake upstream numbers its answers, so every fresh answer differs: 3 of 3.
    assert row["false_hits"] == 3 and row["rate"] == 1.0
    assert 0.0 < row["ci95"][0] < 1.0 and row["ci95"][1] == 1.0
    metrics = _admin(gateway, "GET", "/metrics").text
    assert 'gateway_audit_samples_total{layer="exact",tenant="acme"} 3.0' in metrics
    # Audit calls are not requests.
    assert _admin(gateway, "GET", "/admin/stats").json()["totals"]["requests"] == 4


def test_prompts_enter_decision_records_only_when_the_policy_says_so(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    gateway, _ = gateway_with_policies(
        start_gateway, tmp_path, {"tenant.acme.yaml": "telemetry: {record_prompts: true}\n"}
    )
    acme = _chat(gateway, "What is the capital of Chile?")
    globex = _chat(gateway, "What is the capital of Peru?", tenant="globex")
    records = {
        r["request_id"]: r for r in _admin(gateway, "GET", "/admin/decisions").json()["data"]
    }
    assert records[acme["x-request-id"]]["prompt"] == "What is the capital of Chile?"
    assert "prompt" not in records[globex["x-request-id"]]
