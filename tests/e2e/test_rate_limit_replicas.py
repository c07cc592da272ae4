"""Two `gateway serve` processes on one Redis share one rate limit: N requests over
the limit, spread over both, get exactly the excess as 429s."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from gateway.testing.redis_server import RedisServer
from tests.e2e.helpers import GatewayProcess, unique_prompt
from tests.helpers import TENANT_KEYS, FakeUpstream, gateway_config_dict

STARTUP_SECONDS = 120


@pytest.fixture
def limited_replicas(
    upstream: FakeUpstream, redis_server: RedisServer, tmp_path: Path
) -> Iterator[list[str]]:
    policies = tmp_path / "policies"
    policies.mkdir()
    # Four at once, then one a minute: nothing frees up while the test runs.
    policy = "rate_limits:\n  tenant: {rpm: 1, request_burst: 4}\n"
    (policies / "tenant.acme.yaml").write_text(policy)
    raw = gateway_config_dict(upstream.url, tmp_path / "data")
    raw["storage"] = {
        "backend": "redis",
        "redis_url": redis_server.url,
        "redis_prefix": f"limits{os.getpid()}{int(time.time())}",
        "path": str(tmp_path / "data"),
    }
    raw["policies_dir"] = str(policies)
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


def test_two_replicas_share_one_rate_limit(limited_replicas: list[str]) -> None:
    statuses = []
    for n in range(7):
        answer = httpx.post(
            f"{limited_replicas[n % 2]}/v1/chat/completions",
            headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
            json={
                "model": "fake-model",
                "messages": [{"role": "user", "content": unique_prompt("Define a monad")}],
            },
            timeout=30,
        )
        statuses.append(answer.status_code)
    # Each replica alone would have admitted 4 of its own; together they admit 4.
    assert sorted(statuses) == [200] * 4 + [429] * 3
    assert statuses[:4] == [200] * 4
