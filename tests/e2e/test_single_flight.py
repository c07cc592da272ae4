"""Single flight over HTTP: concurrent identical misses, JSON and streaming, make one
upstream call, within one gateway and across two replicas sharing Redis; a failing
leader leaves every follower with its own answer (here: its own error), never a hang."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import orjson
import pytest

from tests.e2e.helpers import unique_prompt, upstream_calls
from tests.helpers import TENANT_KEYS, FakeUpstream, GatewayFactory, RunningGateway

Result = tuple[int, str, dict[str, str]]


def _ask(gateway: RunningGateway, prompt: str, stream: bool = False) -> Result:
    """(status, answer text, headers); a stream's text is its deltas joined."""
    body: dict[str, Any] = {
        "model": "fake-model",
        "messages": [{"role": "user", "content": prompt}],
        "stream": stream,
    }
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    with httpx.Client(timeout=30) as client:
        response = client.post(f"{gateway.base_url}/chat/completions", json=body, headers=headers)
    if response.status_code != 200:
        return response.status_code, "", dict(response.headers)
    if not stream:
        text = response.json()["choices"][0]["message"]["content"]
        return response.status_code, text, dict(response.headers)
    parts = [
        choice.get("delta", {}).get("content") or ""
        for line in response.text.splitlines()
        if line.startswith("data: {")
        for choice in orjson.loads(line[6:]).get("choices", [])
    ]
    return response.status_code, "".join(parts), dict(response.headers)


def _concurrently(calls: list[tuple[RunningGateway, str, bool]]) -> list[Result]:
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(lambda call: _ask(*call), calls))


def test_identical_misses_share_one_upstream_call(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = f"Explain photosynthesis briefly {uuid.uuid4().hex[:4]} [[sleep:0.5]]"
    before = upstream_calls(upstream, prompt)
    results = _concurrently([(gateway, prompt, i % 2 == 1) for i in range(8)])
    assert upstream_calls(upstream, prompt) == before + 1
    assert {status for status, _, _ in results} == {200}
    assert len({text for _, text, _ in results}) == 1  # streams and JSON alike
    assert sum(1 for _, _, headers in results if headers.get("x-gateway-coalesced")) == 7


def test_a_failing_leader_does_not_hang_its_followers(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = f"Explain osmosis briefly {uuid.uuid4().hex[:4]} [[sleep:0.3]] [[status:500]]"
    started = time.monotonic()
    results = _concurrently([(gateway, prompt, False) for _ in range(4)])
    assert [status for status, _, _ in results] == [502] * 4
    assert time.monotonic() - started < 10
    assert upstream_calls(upstream, prompt) >= 4  # each follower forwarded on its own


@pytest.mark.parametrize("storage_backend", ["redis"])
def test_replicas_sharing_redis_make_one_upstream_call(
    start_gateway: GatewayFactory, upstream: FakeUpstream, storage_backend: str
) -> None:
    first = start_gateway()
    second = start_gateway()  # same Redis prefix: replicas of one deployment
    prompt = f"Explain diffusion briefly {uuid.uuid4().hex[:4]} [[sleep:0.6]]"
    before = upstream_calls(upstream, prompt)
    results = _concurrently(
        [(first if i % 2 == 0 else second, prompt, i % 3 == 0) for i in range(6)]
    )
    assert {status for status, _, _ in results} == {200}
    assert len({text for _, text, _ in results}) == 1
    assert upstream_calls(upstream, prompt) == before + 1


# `SINGLE_FLIGHT_TRIALS=500` for the measurement; 200 in the suite.
_TRIALS = int(os.environ.get("SINGLE_FLIGHT_TRIALS", "200"))


async def _burst(client: httpx.AsyncClient, url: str, prompt: str, size: int) -> list[Result]:
    body = {"model": "fake-model", "messages": [{"role": "user", "content": prompt}]}
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    responses = await asyncio.gather(
        *(client.post(f"{url}/chat/completions", json=body, headers=headers) for _ in range(size))
    )
    return [
        (r.status_code, r.json()["choices"][0]["message"]["content"], dict(r.headers))
        for r in responses
    ]


def _layer_and_reason(headers: dict[str, str]) -> str:
    reason = headers.get("x-gateway-cache-reason")
    return f"{headers['x-gateway-cache']}/{reason}" if reason else headers["x-gateway-cache"]


@pytest.fixture
def patient_gateway(
    start_gateway: GatewayFactory, storage_backend: str, request: pytest.FixtureRequest
) -> RunningGateway:
    """A gateway whose Redis calls may take 2 s: on a loaded box a store that times out
    stores nothing, and the next identical request rightly forwards again; this test is
    about the race, not about Redis timeouts."""
    if storage_backend != "redis":
        return start_gateway()
    redis = request.getfixturevalue("redis_server")
    return start_gateway(
        storage={
            "backend": "redis",
            "redis_url": redis.url,
            "redis_prefix": f"t{uuid.uuid4().hex[:12]}",
            "redis_timeout_seconds": 2.0,
        }
    )


def test_identical_bursts_make_one_upstream_call_every_time(
    patient_gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    """Four identical requests at once, against an upstream that answers at once, over
    hundreds of trials: a request whose exact read missed just before another stored the
    answer used to lead a second upstream call (a different answer), or was labelled a
    semantic hit of its own question."""
    gateway = patient_gateway

    async def trials() -> list[tuple[int, int, set[str], list[str]]]:
        outcomes = []
        async with httpx.AsyncClient(timeout=30) as client:
            for trial in range(_TRIALS):
                # A number per trial: no trial's stored answer is a semantic match for
                # another's (the numbers disagree), so each trial starts from nothing.
                prompt = unique_prompt(f"Explain tides briefly, part {trial + 1}")
                results = await _burst(client, gateway.base_url, prompt, 4)
                layers = sorted(_layer_and_reason(headers) for _, _, headers in results)
                outcomes.append(
                    (
                        upstream_calls(upstream, prompt),
                        len({status for status, _, _ in results}),
                        {text for _, text, _ in results},
                        layers,
                    )
                )
        return outcomes

    outcomes = asyncio.run(trials())
    wrong = [
        (trial, calls, layers)
        for trial, (calls, statuses, texts, layers) in enumerate(outcomes)
        if calls != 1
        or statuses != 1
        or len(texts) != 1
        or layers[:3] != ["exact"] * 3
        or not layers[3].startswith("miss")
    ]
    # (trial, upstream calls, layer/reason of the four answers) of the first failures
    assert not wrong, wrong[:5]
