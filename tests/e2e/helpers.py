"""Helpers for end-to-end tests that drive the gateway with the official openai client."""

from __future__ import annotations

import random
from pathlib import Path

from openai import OpenAI

from tests.conftest import TENANT_KEYS, FakeUpstream, GatewayFactory, RunningGateway


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
    # A per-test token keeps tests independent on the session-wide upstream.
    return f"{text} (topic {' '.join(_rng.choices(_WORDS, k=5))})"


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
