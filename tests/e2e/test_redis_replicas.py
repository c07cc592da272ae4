"""Redis as the shared backend: replicas share answers, an outage fails open."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.testing.redis_server import RedisServer
from tests.e2e.helpers import GatewayProcess, client_for, unique_prompt, upstream_calls
from tests.helpers import TENANT_KEYS, FakeUpstream, GatewayFactory, gateway_config_dict

STARTUP_SECONDS = 120


def _chat(url: str, text: str, tenant: str = "acme") -> httpx.Response:
    return httpx.post(
        f"{url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS[tenant]}"},
        json={"model": "fake-model", "messages": [{"role": "user", "content": text}]},
        timeout=30,
    )


@pytest.fixture
def two_replicas(
    upstream: FakeUpstream, redis_server: RedisServer, tmp_path: Path
) -> Iterator[list[str]]:
    """Two `gateway serve` processes on one Redis, as a load balancer would see them."""
    raw = gateway_config_dict(upstream.url, tmp_path / "data")
    raw["storage"] = {
        "backend": "redis",
        "redis_url": redis_server.url,
        "redis_prefix": f"replicas{os.getpid()}{int(time.time())}",
        "path": str(tmp_path / "data"),
    }
    raw["server"] = {"log_level": "warning"}
    config_path = tmp_path / "gateway.yaml"
    config_path.write_text(yaml.safe_dump(raw))
    replicas = [GatewayProcess(config_path, tmp_path / f"gw{n}.log", wait=False) for n in range(2)]
    try:
        for replica in replicas:
            replica.wait_until_ready(STARTUP_SECONDS)
        yield [replica.url for replica in replicas]
    finally:
        for replica in replicas:
            replica.stop()


def test_an_answer_stored_by_one_replica_is_served_by_the_other(
    two_replicas: list[str], upstream: FakeUpstream
) -> None:
    first, second = two_replicas
    stored = _chat(first, "How do I merge two dictionaries in Python?")
    assert stored.headers["x-gateway-cache"] == "miss"
    # The write happens after the response; give it a moment on this busy machine.
    deadline = time.monotonic() + 5
    while True:
        exact = _chat(second, "How do I merge two dictionaries in Python?")
        if exact.headers["x-gateway-cache"] == "exact" or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert exact.headers["x-gateway-cache"] == "exact"
    assert (
        exact.json()["choices"][0]["message"]["content"]
        == (stored.json()["choices"][0]["message"]["content"])
    )
    semantic = _chat(second, "How can I merge two dictionaries in Python?")
    assert semantic.headers["x-gateway-cache"] == "semantic"
    other_tenant = _chat(second, "How do I merge two dictionaries in Python?", tenant="globex")
    assert other_tenant.headers["x-gateway-cache"] == "miss"


@pytest.mark.parametrize("storage_backend", ["redis"])
def test_redis_outage_fails_open_and_recovers(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path, storage_backend: str
) -> None:
    redis = RedisServer(log_path=tmp_path / "redis.log").start()
    try:
        gateway = start_gateway(
            storage={"backend": "redis", "redis_url": redis.url, "path": str(tmp_path / "d")}
        )
        client = client_for(gateway)
        before = unique_prompt("What is a monad")
        client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": before}]
        )
        redis.stop()
        during = [unique_prompt("What is a functor") for _ in range(5)]
        for text in [*during, before]:
            raw = client.chat.completions.with_raw_response.create(
                model="fake-model", messages=[{"role": "user", "content": text}]
            )
            assert raw.http_response.status_code == 200
            assert raw.headers["x-gateway-cache"] == "miss"
            assert raw.headers["x-gateway-cache-reason"] == "store_unavailable"
        ready = httpx.get(f"{gateway.url}/readyz").json()
        assert ready["status"] == "degraded" and ready["storage"]["available"] is False

        redis.start()  # empty again: no persistence
        after = unique_prompt("What is an applicative")
        deadline = time.monotonic() + 15
        while True:
            raw = client.chat.completions.with_raw_response.create(
                model="fake-model", messages=[{"role": "user", "content": after}]
            )
            assert raw.http_response.status_code == 200
            if raw.headers["x-gateway-cache"] == "exact":
                break
            assert time.monotonic() < deadline, "the gateway did not recover"
            time.sleep(0.3)
        assert upstream_calls(upstream, after) >= 1
    finally:
        redis.stop()
