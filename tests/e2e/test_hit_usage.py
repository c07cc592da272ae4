"""What `usage` a cache hit reports (policy `cache_hit_usage`), as the openai client
parses it, in JSON and in a stream, on both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.helpers import client_for, gateway_with_policies, unique_prompt
from tests.helpers import GatewayFactory, RunningGateway

# What the fake upstream reports for every answer.
UPSTREAM_USAGE = {
    "prompt_tokens": 10,
    "completion_tokens": 7,
    "total_tokens": 17,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 2, "audio_tokens": 0},
}
# A hit: the same counts and details, every prompt token marked cached.
HIT_USAGE = {
    **UPSTREAM_USAGE,
    "prompt_tokens_details": {"cached_tokens": 10, "audio_tokens": 0},
}
ZERO_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def _ask(gateway: RunningGateway, prompt: str) -> tuple[str, dict[str, Any]]:
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": prompt}]
    )
    completion = raw.parse()
    assert completion.usage is not None
    return raw.headers["x-gateway-cache"], completion.usage.model_dump(exclude_none=True)


def _stream_usage(gateway: RunningGateway, prompt: str) -> tuple[str, dict[str, Any]]:
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[{"role": "user", "content": prompt}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(raw.parse())
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    return raw.headers["x-gateway-cache"], chunks[-1].usage.model_dump(exclude_none=True)


def test_hits_report_the_stored_usage_marked_cached(gateway: RunningGateway) -> None:
    prompt = unique_prompt()
    assert _ask(gateway, prompt) == ("miss", UPSTREAM_USAGE)
    assert _ask(gateway, prompt) == ("exact", HIT_USAGE)
    # The same for a streamed hit with `stream_options.include_usage`.
    assert _stream_usage(gateway, prompt) == ("exact", HIT_USAGE)


def test_streamed_miss_and_its_replay_report_usage(gateway: RunningGateway) -> None:
    prompt = unique_prompt()
    assert _stream_usage(gateway, prompt) == ("miss", UPSTREAM_USAGE)
    assert _stream_usage(gateway, prompt) == ("exact", HIT_USAGE)
    assert _ask(gateway, prompt) == ("exact", HIT_USAGE)


def test_semantic_hit_reports_the_stored_usage(gateway: RunningGateway) -> None:
    system = {"role": "system", "content": "You are a helpful assistant."}
    asked = []
    for text in ("How do I sort a list in Python?", "How can I sort a list in Python?"):
        raw = client_for(gateway).chat.completions.with_raw_response.create(
            model="fake-model", messages=[system, {"role": "user", "content": text}]
        )
        usage = raw.parse().usage
        assert usage is not None
        asked.append((raw.headers["x-gateway-cache"], usage.model_dump(exclude_none=True)))
    assert asked[1] == ("semantic", HIT_USAGE)


def test_policy_zero_reports_nothing_spent(start_gateway: GatewayFactory, tmp_path: Path) -> None:
    gateway, _ = gateway_with_policies(
        start_gateway, tmp_path, {"default.yaml": "cache_hit_usage: zero\n"}
    )
    prompt = unique_prompt()
    assert _ask(gateway, prompt) == ("miss", UPSTREAM_USAGE)
    layer, usage = _ask(gateway, prompt)
    assert (layer, usage) == ("exact", ZERO_USAGE)
    assert _stream_usage(gateway, prompt) == ("exact", ZERO_USAGE)
    # What it saved is still said.
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": prompt}]
    )
    assert raw.headers["x-gateway-tokens-saved"] == "17"
