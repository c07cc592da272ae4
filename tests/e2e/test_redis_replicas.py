"""Redis as the shared backend: replicas share answers, an outage fails open."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.devtools.redis_server import RedisServer
from gateway.devtools.threaded_server import free_port
from tests.conftest import TENANT_KEYS, FakeUpstream, GatewayFactory, gateway_config_dict
from tests.e2e.helpers import client_for, unique_prompt, upstream_calls

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
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NO_PROXY": "127.0.0.1,localhost"}
    ports = [free_port(), free_port()]
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gateway",
                "serve",
                "--config",
                str(config_path),
                "--port",
                str(port),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(tmp_path / f"gw{port}.log").open("wb"),
        )
        for port in ports
    ]
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        for url, process in zip(urls, processes, strict=True):
            while True:
                assert process.poll() is None, "a replica exited during start-up"
                assert time.monotonic() < deadline, "replicas did not become ready"
                try:
                    if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=20)


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
