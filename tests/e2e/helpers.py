"""Helpers for end-to-end tests that drive the gateway with the official openai client."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from openai import OpenAI

from gateway.testing.threaded_server import free_port
from tests.helpers import TENANT_KEYS, FakeUpstream, GatewayFactory, RunningGateway


def client_for(gateway: RunningGateway, tenant: str = "acme", **kwargs: object) -> OpenAI:
    return OpenAI(base_url=gateway.base_url, api_key=TENANT_KEYS[tenant], max_retries=0, **kwargs)


# Plain words: a hex or digit token would (rightly) make the classifier see an ID.
_WORDS = (
    "amber",
    "cobalt",
    "violet",
    "maple",
    "cedar",
    "otter",
    "falcon",
    "lynx",
    "heron",
    "badger",
    "walnut",
    "pebble",
    "willow",
    "meadow",
    "copper",
    "saffron",
    "thistle",
    "juniper",
    "marble",
    "sparrow",
)
_rng = random.Random()


def unique_prompt(text: str = "What is the capital of France?") -> str:
    # A per-test token keeps tests independent on the session-wide upstream. The words
    # are distinct: two draws that differ only in which word repeats ("otter otter
    # cedar" / "otter cedar cedar") hold the same set of content words, and the
    # semantic cache rightly serves one for the other (12 of 400 such pairs).
    return f"{text} (topic {' '.join(_rng.sample(_WORDS, k=5))})"


def upstream_calls(upstream: FakeUpstream, prompt: str) -> int:
    return sum(
        1
        for body in upstream.log.chat_bodies
        if any(prompt in str(m.get("content")) for m in body.get("messages", []))
    )


def gateway_with_policies(
    start_gateway: GatewayFactory, tmp_path: Path, files: dict[str, str], **overrides: object
) -> tuple[RunningGateway, Path]:
    """A gateway whose policies folder holds `files` (name -> YAML text)."""
    policies = tmp_path / "policies"
    policies.mkdir()
    for name, text in files.items():
        (policies / name).write_text(text)
    return start_gateway(policies_dir=str(policies), **overrides), policies


class GatewayProcess:
    """The real `gateway serve` as a child process, on a free port; ready when built
    unless `wait` is false (start several, then `wait_until_ready` on each)."""

    def __init__(self, config_path: Path, log_path: Path, *, wait: bool = True) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        with log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gateway",
                    "serve",
                    "--config",
                    str(config_path),
                    "--port",
                    str(self.port),
                ],
                env={**os.environ, "OMP_NUM_THREADS": "1", "NO_PROXY": "127.0.0.1,localhost"},
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        self._log_path = log_path
        if wait:
            self.wait_until_ready()

    def wait_until_ready(self, timeout_seconds: float = 120) -> None:
        deadline = time.monotonic() + timeout_seconds
        while True:
            assert self.process.poll() is None, self._log_path.read_text()[-2000:]
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the gateway did not start"
            time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM: the normal shutdown."""
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=20)

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs, nothing is flushed or closed."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
