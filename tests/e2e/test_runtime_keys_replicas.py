"""Two `gateway serve` processes on one Redis: a key issued on one works on both, and a
revocation or rotation on one is refused by both within a second."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from gateway.testing.redis_server import RedisServer
from tests.e2e.helpers import GatewayProcess
from tests.helpers import ADMIN_KEY, FakeUpstream, gateway_config_dict

STARTUP_SECONDS = 120
REVOCATION_BOUND_SECONDS = 1.0


@pytest.fixture
def replicas(
    upstream: FakeUpstream, redis_server: RedisServer, tmp_path: Path
) -> Iterator[tuple[list[str], list[Path]]]:
    raw = gateway_config_dict(upstream.url, tmp_path / "data")
    raw["storage"] = {
        "backend": "redis",
        "redis_url": redis_server.url,
        "redis_prefix": f"keys{os.getpid()}{int(time.time())}",
        "path": str(tmp_path / "data"),
    }
    raw["server"] = {"log_level": "info"}
    config_path = tmp_path / "gateway.yaml"
    config_path.write_text(yaml.safe_dump(raw))
    logs = [tmp_path / f"gw{n}.log" for n in range(2)]
    processes = [GatewayProcess(config_path, log, wait=False) for log in logs]
    try:
        for process in processes:
            process.wait_until_ready(STARTUP_SECONDS)
        yield [process.url for process in processes], logs
    finally:
        for process in processes:
            process.stop()


def _status(url: str, key: str) -> int:
    return httpx.get(
        f"{url}/v1/models", headers={"authorization": f"Bearer {key}"}, timeout=30
    ).status_code


def _admin(url: str, method: str, path: str, **kw: Any) -> httpx.Response:
    return httpx.request(
        method, f"{url}{path}", headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=30, **kw
    )


def _refused_everywhere_within_bound(urls: list[str], key: str) -> bool:
    """Polls every replica for up to the bound; True once all refuse the key."""
    deadline = time.monotonic() + REVOCATION_BOUND_SECONDS
    refused: set[str] = set()
    while True:
        refused |= {url for url in urls if _status(url, key) == 401}
        if len(refused) == len(urls) or time.monotonic() > deadline:
            return len(refused) == len(urls)
        time.sleep(0.02)


def test_revocation_and_rotation_reach_every_replica_within_a_second(
    replicas: tuple[list[str], list[Path]],
) -> None:
    urls, logs = replicas
    first, second = urls
    created = _admin(first, "POST", "/admin/keys", json={"tenant": "acme"}).json()
    secret = created["key"]
    # Both replicas now remember the key.
    assert [_status(url, secret) for url in urls] == [200, 200]
    assert _admin(second, "DELETE", f"/admin/keys/{created['id']}").status_code == 200
    assert _refused_everywhere_within_bound(urls, secret)

    other = _admin(second, "POST", "/admin/keys", json={"tenant": "globex"}).json()
    assert [_status(url, other["key"]) for url in urls] == [200, 200]
    rotated = _admin(first, "POST", f"/admin/keys/{other['id']}/rotate").json()
    assert _refused_everywhere_within_bound(urls, other["key"])
    assert [_status(url, rotated["key"]) for url in urls] == [200, 200]

    # One shared trail, newest first, whichever replica wrote it.
    actions = [e["action"] for e in _admin(first, "GET", "/admin/audit").json()["data"]]
    assert actions[:4] == ["key.rotate", "key.create", "key.revoke", "key.create"]
    log_text = "".join(log.read_text() for log in logs)
    assert "key.revoke" in log_text
    for leaked in (secret, other["key"], rotated["key"], ADMIN_KEY):
        assert leaked not in log_text
