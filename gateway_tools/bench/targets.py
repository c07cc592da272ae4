"""The servers under test, each a separate process on loopback, and their cache layers.

- `upstream`: the fake upstream called directly (no cache): the floor;
- `gateway-embedded`, `gateway-redis`: `gateway serve` on each storage backend, with the
  config `gateway bench` writes (default policy; Redis from the test dependencies);
- `litellm-proxy`: `litellm --config proxy.yaml`, in-memory cache (`cache_params: {type:
  local}`), a master key and no database: without DATABASE_URL the proxy never starts
  Prisma, it checks keys against the master key only.

Every server that forwards has a fake upstream of its own, so the upstream CPU of a
phase belongs to that phase's target alone.

How each reports the layer of an answer: the gateway sets `x-gateway-cache` (exact,
semantic, miss, bypass); the LiteLLM proxy sets `x-litellm-cache-key` on answers served
from its cache, and only on those (a forwarded answer carries the upstream's
`llm_provider-*` headers instead, and a non-zero `x-litellm-response-cost`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from gateway.testing.threaded_server import free_port
from gateway_tools.bench.constants import (
    CHAT_PATH,
    EMBEDDED,
    EXACT,
    HOST,
    MISS,
    MODEL,
    REDIS,
    SEMANTIC,
    TENANT_KEY,
    UPSTREAM_KEY,
)
from gateway_tools.bench.http_client import Endpoint
from gateway_tools.bench.processes import Server, spawn, storage_config, write_config
from gateway_tools.bench.prompts import NEW, PARAPHRASE, REPEAT, PromptBank

UPSTREAM, GATEWAY, LITELLM = "upstream", "gateway", "litellm"
LITELLM_KEY = "sk-litellm-bench"
LITELLM_HIT, LITELLM_MISS = "hit", "miss"
NO_CACHE = "none"  # the layer of every answer of the upstream called directly

# What each kind of request must be answered from. LiteLLM's in-memory cache holds 200
# entries (a constant of litellm, `DEFAULT_MAX_SIZE_IN_MEMORY`, not configurable through
# `cache_params`) and evicts the oldest first: in the mix, where 40 % of the requests
# add an entry, a repeat may find its question evicted. That is the proxy's behaviour,
# not a fault of the run, so a repeat may be a miss there (the hit share shows how often).
_GATEWAY_LAYERS = {REPEAT: {EXACT}, PARAPHRASE: {SEMANTIC}, NEW: {MISS}}
_LITELLM_LAYERS = {REPEAT: {LITELLM_HIT}, PARAPHRASE: {LITELLM_MISS}, NEW: {LITELLM_MISS}}
_LITELLM_MIX_REPEAT = {LITELLM_HIT, LITELLM_MISS}


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    kind: str  # UPSTREAM, GATEWAY or LITELLM
    server: Server  # the process that answers the benchmark's requests
    upstream: Server | None  # the fake upstream it forwards to (None: it is one)
    backend: str | None = None  # the gateway's storage backend

    @property
    def endpoint(self) -> Endpoint:
        key = {UPSTREAM: UPSTREAM_KEY, GATEWAY: TENANT_KEY, LITELLM: LITELLM_KEY}[self.kind]
        return Endpoint(self.name, self.server.port, key)

    @property
    def caches(self) -> bool:
        return self.kind != UPSTREAM

    @property
    def hit_layers(self) -> frozenset[str]:
        return frozenset({EXACT, SEMANTIC} if self.kind == GATEWAY else {LITELLM_HIT})

    @property
    def exact_layer(self) -> str:
        """The layer of a primed question asked again verbatim."""
        return EXACT if self.kind == GATEWAY else LITELLM_HIT

    @property
    def probe_head(self) -> bytes:
        """Priming checks: the gateway's `no-store` probe leaves no entry behind, so a
        question that was not stored cannot pass its check by being stored by it. The
        proxy has no such switch; a probe that misses there stores the answer."""
        endpoint = self.endpoint
        return endpoint.no_store_head if self.kind == GATEWAY else endpoint.head

    def questions_to_prime(self, bank: PromptBank) -> tuple[bytes, ...]:
        """The gateway gets every question the paraphrases are of. The proxy only the
        repeated ones: its cache holds 200 entries, oldest evicted first, so priming all
        300 would evict the first ones, and checking them would evict the next ones; the
        others would be of no use anyway (a paraphrase is a miss for an exact cache)."""
        if self.kind == GATEWAY:
            return bank.primed
        return bank.hot if self.kind == LITELLM else ()

    def layer_of(self, headers: Mapping[str, str]) -> str:
        if self.kind == GATEWAY:
            return headers.get("x-gateway-cache", "(none)")
        if self.kind == LITELLM:
            return LITELLM_HIT if "x-litellm-cache-key" in headers else LITELLM_MISS
        return NO_CACHE

    def allowed_layers(self, workload: str, kind: str) -> set[str] | None:
        """The layers a `kind` request of `workload` may be answered from (None: any)."""
        if self.kind == GATEWAY:
            return _GATEWAY_LAYERS[kind]
        if self.kind == LITELLM:
            if workload == "mix" and kind == REPEAT:
                return _LITELLM_MIX_REPEAT
            return _LITELLM_LAYERS[kind]
        return None


def _fresh_port(taken: set[int]) -> int:
    port = free_port()
    while port in taken:
        port = free_port()
    taken.add(port)
    return port


def start_upstream(workdir: Path, name: str, ports: set[int]) -> Server:
    port = _fresh_port(ports)
    log = workdir / f"{name}.log"
    process = spawn(["-m", "gateway.testing.fake_upstream", "--port", str(port)], log)
    return Server(name, process, port, log)


def start_gateway(
    workdir: Path, backend: str, upstream: Server, redis_url: str | None, ports: set[int]
) -> Server:
    """`gateway serve` with the same config `gateway bench` uses, in its own folder."""
    home = workdir / f"gateway-{backend}"
    home.mkdir()
    config = write_config(home, upstream.port, storage_config(backend, home, redis_url))
    port = _fresh_port(ports)
    log = home / "gateway.log"
    process = spawn(["-m", "gateway", "serve", "--config", str(config), "--port", str(port)], log)
    return Server(f"gateway-{backend}", process, port, log)


def litellm_config(upstream: Server) -> dict[str, object]:
    """The proxy's config: the same model entry as the gateway's, its in-memory cache."""
    return {
        "model_list": [
            {
                "model_name": MODEL,
                "litellm_params": {
                    "model": "openai/gpt-4o-mini",
                    "api_base": f"http://{HOST}:{upstream.port}/v1",
                    "api_key": UPSTREAM_KEY,
                },
            }
        ],
        "litellm_settings": {"cache": True, "cache_params": {"type": "local"}},
        # As for the gateway: a retry would hide an error and skew its latency.
        "router_settings": {"num_retries": 0},
        "general_settings": {"master_key": LITELLM_KEY},
    }


def _litellm_command() -> list[str]:
    """`litellm` is a console script next to this interpreter (not the pyenv shim on
    PATH, a shell script that would add a process and pick its own Python)."""
    script = Path(sys.executable).with_name("litellm")
    if not script.exists():
        raise FileNotFoundError(
            f"{script} not found: the LiteLLM proxy CLI is not installed "
            "(pip install 'litellm[proxy]')"
        )
    return [sys.executable, str(script)]


def _litellm_env() -> dict[str, str]:
    env = dict(os.environ)
    # No database: with DATABASE_URL set the proxy would start Prisma and migrations.
    for name in ("DATABASE_URL", "DIRECT_URL", "REDIS_HOST", "REDIS_URL"):
        env.pop(name, None)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # never fetch the cost map
    # Warning level turns off uvicorn's per-request access log: the gateway runs at
    # warning level with its access log off, and neither should pay for a log line.
    env["LITELLM_LOG"] = "WARNING"
    env["NO_PROXY"] = env["no_proxy"] = f"{HOST},localhost"
    env["OMP_NUM_THREADS"] = "1"  # as for the gateway
    return env


def start_litellm(workdir: Path, upstream: Server, ports: set[int]) -> Server:
    home = workdir / "litellm"
    home.mkdir()
    config = home / "proxy.yaml"
    config.write_text(yaml.safe_dump(litellm_config(upstream), sort_keys=False))
    port = _fresh_port(ports)
    log = home / "litellm.log"
    command = [*_litellm_command(), "--config", str(config), "--host", HOST, "--port", str(port)]
    with log.open("wb") as out:
        # Fixed argv: this interpreter, litellm's own script and our config file.
        process = subprocess.Popen(  # noqa: S603
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=_litellm_env(),
            cwd=home,
        )
    return Server("litellm-proxy", process, port, log)


# How to tell each server is up: (method, path).
READINESS = {
    UPSTREAM: ("POST", CHAT_PATH),
    GATEWAY: ("GET", "/readyz"),
    LITELLM: ("GET", "/health/liveliness"),
}
TARGET_NAMES = ("upstream", f"gateway-{EMBEDDED}", f"gateway-{REDIS}", "litellm-proxy")
