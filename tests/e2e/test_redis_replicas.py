"""Redis as the shared backend: replicas share answers, an outage fails open."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.memory.inject import is_memory_block
from gateway.testing.redis_server import RedisServer
from tests.e2e.helpers import GatewayProcess, client_for, unique_prompt, upstream_calls
from tests.helpers import (
    ADMIN_KEY,
    TENANT_KEYS,
    FakeUpstream,
    GatewayFactory,
    gateway_config_dict,
)

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
    """Two `gateway serve` processes on one Redis, as a load balancer would see them.
    They may answer knowledge versions from memory for 30 s, so a change that reaches
    the other replica within a test's few seconds came by the versions' messages."""
    raw = gateway_config_dict(upstream.url, tmp_path / "data")
    raw["storage"] = {
        "backend": "redis",
        "redis_url": redis_server.url,
        "redis_prefix": f"replicas{os.getpid()}{int(time.time())}",
        "path": str(tmp_path / "data"),
        "redis_knowledge_version_memory_seconds": 30,
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


def _knowledge_block(url: str, upstream: FakeUpstream, question: str) -> str | None:
    """Asks `question` (no user: the tenant's knowledge alone may be injected) and
    returns the memory block the upstream received with it, if any."""
    answered = _chat(url, question)
    assert answered.status_code == 200, answered.text
    bodies = [
        body
        for body in upstream.log.chat_bodies
        if any(question in str(m.get("content")) for m in body["messages"])
    ]
    assert bodies, f"not forwarded: {answered.headers['x-gateway-cache']}"
    blocks = [m["content"] for m in bodies[-1]["messages"] if is_memory_block(m)]
    return str(blocks[0]) if blocks else None


def test_knowledge_changed_on_one_replica_is_used_by_the_other_at_once(
    two_replicas: list[str], upstream: FakeUpstream
) -> None:
    first, second = two_replicas
    topic = uuid.uuid4().hex[:6]
    # The second replica reads the tenant's version (none yet) and remembers it.
    for n in range(3):
        assert _knowledge_block(second, upstream, f"Which {topic} warranty applies ({n})?") is None
    fact = f"The {topic} warranty covers water damage for three years."
    admin = {"authorization": f"Bearer {ADMIN_KEY}", "x-gateway-tenant": "acme"}
    created = httpx.post(
        f"{first}/knowledge", headers=admin, json={"content": fact, "title": "Warranty"}, timeout=30
    )
    assert created.status_code == 201, created.text

    block = _knowledge_block(second, upstream, f"Does the {topic} warranty cover water damage?")
    assert block is not None and fact in block

    item_id = created.json()["data"][0]["id"]
    deleted = httpx.delete(f"{first}/knowledge/{item_id}", headers=admin, timeout=30)
    assert deleted.status_code in (200, 204), deleted.text
    question = f"For how long does the {topic} warranty cover water damage?"
    assert _knowledge_block(second, upstream, question) is None


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
