"""Spend and budgets over HTTP, on both backends: what forwarded requests cost (litellm's
price map, or the config's prices), recorded per tenant, key, model and day in
`/admin/spend`, `/admin/stats` and `/metrics`; a tenant's daily budget stops it within
one request's cost with a 402 the openai client does not retry; hits are served past it
and spend nothing."""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
import yaml

from gateway.testing.redis_server import RedisServer
from tests.e2e.helpers import GatewayProcess, client_for, gateway_with_policies, unique_prompt
from tests.helpers import (
    ADMIN_KEY,
    TENANT_KEYS,
    FakeUpstream,
    GatewayFactory,
    RunningGateway,
    gateway_config_dict,
)

PRICED_MODEL = "gpt-4o-mini"
# What the fake upstream reports for every answer.
PROMPT_TOKENS, COMPLETION_TOKENS = 10, 7
# Config prices for the override tests (USD per token).
INPUT_PRICE, OUTPUT_PRICE = 0.001, 0.002
OVERRIDE_COST = PROMPT_TOKENS * INPUT_PRICE + COMPLETION_TOKENS * OUTPUT_PRICE  # 0.024


def _litellm_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    prompt_usd, completion_usd = litellm.cost_per_token(
        model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
    )
    return float(prompt_usd) + float(completion_usd)


def _models(upstream: FakeUpstream, model_info: dict[str, Any] | None = None) -> list[Any]:
    """The test config's models plus `gpt-4o-mini` (litellm has its price) on the fake
    upstream."""
    models = gateway_config_dict(upstream.url, Path("unused"))["model_list"]
    priced: dict[str, Any] = {
        "model_name": PRICED_MODEL,
        "litellm_params": {
            "model": f"openai/{PRICED_MODEL}",
            "api_base": f"{upstream.url}/v1",
            "api_key": "sk-upstream-secret-123456",
        },
    }
    if model_info is not None:
        priced["model_info"] = model_info
    return [*models, priced]


def _override_prices() -> dict[str, float]:
    return {"input_cost_per_token": INPUT_PRICE, "output_cost_per_token": OUTPUT_PRICE}


def _admin_json(gateway: RunningGateway | _Replica, path: str) -> Any:
    response = httpx.get(
        f"{gateway.url}{path}", headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=30
    )
    assert response.status_code == 200, response.text
    return response.json()


def _ask(gateway: RunningGateway | _Replica, prompt: str, tenant: str = "acme") -> httpx.Response:
    return httpx.post(
        f"{gateway.base_url}/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS[tenant]}"},
        json={"model": PRICED_MODEL, "messages": [{"role": "user", "content": prompt}]},
        timeout=30,
    )


def _refusals(gateway: RunningGateway) -> int:
    records = _admin_json(gateway, "/admin/decisions?tenant=acme&limit=1000")["data"]
    return sum(1 for record in records if record["status"] == 402)


def _spent(gateway: RunningGateway | _Replica, tenant: str = "acme") -> dict[str, Any]:
    body = _admin_json(gateway, f"/admin/spend?tenant={tenant}&group_by=model")
    rows = [row for row in body["data"] if row["model"] == PRICED_MODEL]
    return rows[0] if rows else {"spent_usd": 0.0, "requests": 0, "hits": 0, "saved_usd": 0.0}


def test_spend_matches_the_price_map_and_hits_spend_nothing(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(model_list=_models(upstream))
    expected = _litellm_cost(f"openai/{PRICED_MODEL}", PROMPT_TOKENS, COMPLETION_TOKENS)
    assert expected > 0
    prompts = [unique_prompt() for _ in range(3)]
    for prompt in prompts:
        assert _ask(gateway, prompt).headers["x-gateway-cache"] == "miss"
    row = _spent(gateway)
    assert row["requests"] == 3 and row["estimated_requests"] == 0
    assert row["spent_usd"] == pytest.approx(3 * expected, rel=1e-6)
    # A hit spends nothing and saves what the answer cost.
    assert _ask(gateway, prompts[0]).headers["x-gateway-cache"] == "exact"
    row = _spent(gateway)
    assert row["spent_usd"] == pytest.approx(3 * expected, rel=1e-6)
    assert row["hits"] == 1 and row["saved_usd"] == pytest.approx(expected, rel=1e-6)
    # Per key: the tenant's one key, named by its digest prefix (never the key).
    by_key = _admin_json(gateway, "/admin/spend?tenant=acme&group_by=key")["data"]
    assert len(by_key) == 1 and re.fullmatch(r"sha256:[0-9a-f]{12}", by_key[0]["key"])
    assert TENANT_KEYS["acme"] not in str(by_key)
    # Side by side in /admin/stats and /metrics.
    stats = _admin_json(gateway, "/admin/stats")["spend"]
    (stat_row,) = [r for r in stats["rows"] if r["tenant"] == "acme" and r["model"] == PRICED_MODEL]
    assert stat_row["spent_usd"] == pytest.approx(3 * expected, rel=1e-6)
    assert stat_row["saved_usd"] == pytest.approx(expected, rel=1e-6)
    assert stat_row["requests"] == 3
    metrics = httpx.get(
        f"{gateway.url}/metrics", headers={"authorization": f"Bearer {ADMIN_KEY}"}
    ).text
    spent_line = re.search(
        r'gateway_cost_spent_usd_total\{model="gpt-4o-mini",tenant="acme"\} (\S+)', metrics
    )
    assert spent_line is not None
    assert float(spent_line.group(1)) == pytest.approx(3 * expected, rel=1e-6)
    assert 'gateway_cost_saved_usd_total{model="gpt-4o-mini",tenant="acme"}' in metrics


def test_streams_are_priced_from_the_usage_chunk_else_estimated(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(model_list=_models(upstream, _override_prices()))
    client = client_for(gateway)
    messages = [{"role": "user", "content": unique_prompt()}]
    with_usage = client.chat.completions.create(
        model=PRICED_MODEL, messages=messages, stream=True, stream_options={"include_usage": True}
    )
    assert list(with_usage)[-1].usage is not None
    row = _spent(gateway)
    assert row["spent_usd"] == pytest.approx(OVERRIDE_COST) and row["estimated_requests"] == 0
    # No usage chunk: counted with tiktoken, marked estimated.
    plain = client.chat.completions.create(
        model=PRICED_MODEL, messages=[{"role": "user", "content": unique_prompt()}], stream=True
    )
    assert all(chunk.usage is None for chunk in plain)
    row = _spent(gateway)
    assert row["requests"] == 2 and row["estimated_requests"] == 1
    assert row["spent_usd"] > OVERRIDE_COST + 10 * INPUT_PRICE  # the estimate counted tokens


def test_config_prices_override_the_price_map(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(model_list=_models(upstream, _override_prices()))
    _ask(gateway, unique_prompt())
    _ask(gateway, unique_prompt())
    assert _spent(gateway)["spent_usd"] == pytest.approx(2 * OVERRIDE_COST)


def test_a_daily_budget_stops_the_tenant_within_one_request(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    budget = 2.5 * OVERRIDE_COST
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"tenant.acme.yaml": f"budget:\n  daily_usd: {budget}\n"},
        model_list=_models(upstream, _override_prices()),
    )
    answered: list[str] = []
    refusal: httpx.Response | None = None
    for _ in range(10):
        prompt = unique_prompt()
        response = _ask(gateway, prompt)
        if response.status_code != 200:
            refusal = response
            break
        answered.append(prompt)
    assert refusal is not None, "the budget never stopped the tenant"
    spent = _spent(gateway)["spent_usd"]
    assert budget <= spent < budget + OVERRIDE_COST
    assert refusal.status_code == 402
    assert refusal.headers["x-should-retry"] == "false"
    assert refusal.json()["error"]["type"] == "insufficient_quota"
    assert refusal.json()["error"]["code"] == "budget_exceeded"
    assert set(refusal.json()["error"]) == {"message", "type", "param", "code"}
    # The openai client does not retry it: one request reaches the gateway.
    sent: list[httpx.Request] = []
    client = openai.OpenAI(
        base_url=gateway.base_url,
        api_key=TENANT_KEYS["acme"],
        max_retries=2,
        http_client=httpx.Client(event_hooks={"request": [sent.append]}),
    )
    with pytest.raises(openai.APIStatusError) as refused:
        client.chat.completions.create(
            model=PRICED_MODEL, messages=[{"role": "user", "content": unique_prompt()}]
        )
    assert refused.value.status_code == 402 and len(sent) == 1
    # The Anthropic door: its billing error, not retried by the Anthropic client either
    # (counted by the gateway's own decision records: that SDK brings its own HTTP client).
    refusals = _refusals(gateway)
    claude = anthropic.Anthropic(base_url=gateway.url, api_key=TENANT_KEYS["acme"], max_retries=2)
    with pytest.raises(anthropic.APIStatusError) as billed:
        claude.messages.create(
            model=PRICED_MODEL, max_tokens=16, messages=[{"role": "user", "content": "Hi"}]
        )
    assert billed.value.status_code == 402 and _refusals(gateway) == refusals + 1
    assert billed.value.body["error"]["type"] == "billing_error"  # type: ignore[index]
    # Cache hits cost nothing: still served, and nothing more is spent.
    hit = _ask(gateway, answered[0])
    assert hit.status_code == 200 and hit.headers["x-gateway-cache"] == "exact"
    assert _spent(gateway)["spent_usd"] == pytest.approx(spent)
    # Another tenant has its own spend.
    assert _ask(gateway, unique_prompt(), tenant="globex").status_code == 200


def test_a_key_budget_stops_that_key_only(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    second_key = "sk-acme-2"
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"tenant.acme.yaml": f"budget:\n  key_daily_usd: {1.5 * OVERRIDE_COST}\n"},
        model_list=_models(upstream, _override_prices()),
        auth={
            "tenants": [
                {"name": "acme", "api_keys": [TENANT_KEYS["acme"], second_key]},
                {"name": "globex", "api_keys": [TENANT_KEYS["globex"]]},
            ],
            "admin_keys": [ADMIN_KEY],
        },
    )
    assert [_ask(gateway, unique_prompt()).status_code for _ in range(3)] == [200, 200, 402]
    other = httpx.post(
        f"{gateway.base_url}/chat/completions",
        headers={"authorization": f"Bearer {second_key}"},
        json={"model": PRICED_MODEL, "messages": [{"role": "user", "content": unique_prompt()}]},
        timeout=30,
    )
    assert other.status_code == 200
    by_key = _admin_json(gateway, "/admin/spend?tenant=acme&group_by=key")["data"]
    assert sorted(row["requests"] for row in by_key) == [1, 2]


def test_past_the_soft_threshold_responses_warn(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    budget = 10 * OVERRIDE_COST
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"tenant.acme.yaml": f"budget:\n  daily_usd: {budget}\n  soft_threshold: 0.25\n"},
        model_list=_models(upstream, _override_prices()),
    )
    first = _ask(gateway, unique_prompt())
    assert "x-gateway-budget-warning" not in first.headers
    assert float(first.headers["x-gateway-budget-remaining-usd"]) == pytest.approx(budget)
    warnings = [_ask(gateway, unique_prompt()).headers for _ in range(3)]
    # Spent before each: 1, 2 and 3 requests' cost; the threshold is 2.5 requests' cost.
    assert [h.get("x-gateway-budget-warning") for h in warnings] == [None, None, "daily"]
    remaining = float(warnings[-1]["x-gateway-budget-remaining-usd"])
    assert remaining == pytest.approx(budget - 3 * OVERRIDE_COST)
    metrics = httpx.get(
        f"{gateway.url}/metrics", headers={"authorization": f"Bearer {ADMIN_KEY}"}
    ).text
    assert 'gateway_budget_soft_exceeded_total{period="daily",tenant="acme"} 1.0' in metrics
    # A tenant without a budget gets no budget headers.
    other = _ask(gateway, unique_prompt(), tenant="globex")
    assert "x-gateway-budget-remaining-usd" not in other.headers


def test_admin_spend_rejects_bad_ranges(gateway: RunningGateway) -> None:
    for query, param in (
        ("from=2026-13-01", "from"),
        ("to=yesterday", "to"),
        ("from=2026-02-01&to=2026-01-01", "from"),
        ("from=2020-01-01&to=2026-01-01", "from"),
        ("group_by=tenant", "group_by"),
    ):
        response = httpx.get(
            f"{gateway.url}/admin/spend?{query}",
            headers={"authorization": f"Bearer {ADMIN_KEY}"},
        )
        assert response.status_code == 400, query
        assert response.json()["error"]["param"] == param
    tenant = httpx.get(
        f"{gateway.url}/admin/spend", headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    )
    assert tenant.status_code == 403


def test_two_replicas_on_redis_share_the_spend_and_the_budget(
    upstream: FakeUpstream, redis_server: RedisServer, tmp_path: Path
) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    budget = 1.5 * OVERRIDE_COST
    (policies / "tenant.acme.yaml").write_text(f"budget:\n  daily_usd: {budget}\n")
    raw = gateway_config_dict(upstream.url, tmp_path / "data")
    raw["model_list"] = _models(upstream, _override_prices())
    raw["policies_dir"] = str(policies)
    raw["storage"] = {
        "backend": "redis",
        "redis_url": redis_server.url,
        "redis_prefix": f"spend{uuid.uuid4().hex[:12]}",
        "path": str(tmp_path / "data"),
    }
    raw["server"] = {"log_level": "warning"}
    raw["spend"] = {"flush_seconds": 0.2, "budget_refresh_seconds": 0.2}
    config_path = tmp_path / "gateway.yaml"
    config_path.write_text(yaml.safe_dump(raw))
    replicas = [GatewayProcess(config_path, tmp_path / f"gw{n}.log", wait=False) for n in range(2)]
    try:
        for replica in replicas:
            replica.wait_until_ready(120)
        first, second = (_Replica(replica.url) for replica in replicas)
        assert _ask(first, unique_prompt()).status_code == 200
        # The second replica sees what the first spent once it is written (flush_seconds)
        # and its own view refreshed (budget_refresh_seconds); its next request is the
        # one that crosses the budget, the one after it is refused.
        deadline = time.monotonic() + 10
        while _spent(second)["requests"] < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _spent(second)["spent_usd"] == pytest.approx(OVERRIDE_COST)
        time.sleep(0.5)
        assert _ask(second, unique_prompt()).status_code == 200
        assert _ask(second, unique_prompt()).status_code == 402
        # And the first replica stops the tenant too, once the second's spend is written
        # (flush_seconds) and its own view is older than budget_refresh_seconds: a replica
        # whose view is fresher may let one more request through, which is the documented
        # bound (the requests in flight), not what this checks.
        deadline = time.monotonic() + 10
        while _spent(first)["requests"] < 2:
            assert time.monotonic() < deadline, "the second replica never wrote its spend"
            time.sleep(0.1)
        time.sleep(0.5)
        assert _ask(first, unique_prompt()).status_code == 402
        total = _spent(first)
        assert total["requests"] == 2 and total["spent_usd"] == pytest.approx(2 * OVERRIDE_COST)
    finally:
        for replica in replicas:
            replica.stop()


class _Replica:
    """What `_ask` and `_spent` need of a gateway: its URLs."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.base_url = f"{url}/v1"
