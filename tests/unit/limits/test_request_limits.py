"""The request limits in front of the pipeline, with the in-process limiter and a
store that is down: fail open (counted) or closed (503), and how a stream without a
usage chunk is settled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import pytest

from gateway.auth import Principal
from gateway.errors import StoreUnavailableResponse
from gateway.limits.headers import RateLimited
from gateway.limits.outcome import settle_outcome
from gateway.limits.service import RequestLimits
from gateway.pipeline.decision import DecisionBuilder
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import StreamOutcome
from gateway.policy.models import Policy
from gateway.storage.embedded.rate_limiter import InProcessRateLimiter
from gateway.storage.protocols import StoreUnavailable
from gateway.storage.rate_limiting import RateBucket, RateVerdict
from gateway.telemetry.metrics import GatewayMetrics


class DownLimiter:
    """A limiter whose store cannot be reached (the protocol's failure)."""

    async def acquire(self, buckets: Sequence[RateBucket]) -> RateVerdict:
        raise StoreUnavailable("down")

    async def adjust(self, buckets: Sequence[RateBucket]) -> None:
        raise StoreUnavailable("down")


class FakeClock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def _request(policy: Policy) -> ChatRequest:
    body = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}
    return ChatRequest(
        request_id="r",
        principal=Principal("acme", key_id="k1"),
        model="m",
        body=body,
        policy=policy,
    )


def _limits(limiter: Any, policy: Policy, metrics: GatewayMetrics | None = None) -> RequestLimits:
    return RequestLimits(
        limiter,
        lambda tenant: policy,
        lambda model, body: 10,  # every prompt: 10 tokens
        lambda model, text: len(text.split()),  # a token a word
        metrics,
    )


def _policy(**rate_limits: Any) -> Policy:
    return Policy.model_validate({"rate_limits": rate_limits, "failure": {}})


async def test_a_store_that_is_down_fails_open_and_is_counted() -> None:
    policy = _policy(tenant={"rpm": 1})
    metrics = GatewayMetrics()
    limits = _limits(DownLimiter(), policy, metrics)
    for _ in range(3):
        await limits.admit(_request(policy))
    failures = metrics.registry.get_sample_value(
        "gateway_store_failures_total", {"store": "rate_limiter", "operation": "acquire"}
    )
    assert failures == 3


async def test_a_store_that_is_down_fails_closed_when_the_policy_says_so() -> None:
    policy = Policy.model_validate(
        {"rate_limits": {"tenant": {"rpm": 1}}, "failure": {"rate_limit": "closed"}}
    )
    with pytest.raises(StoreUnavailableResponse):
        await _limits(DownLimiter(), policy).admit(_request(policy))


async def test_no_limits_means_no_limiter_call() -> None:
    policy = _policy()
    limits = _limits(DownLimiter(), policy, GatewayMetrics())
    grant = await limits.admit(_request(policy))  # would raise if it asked the store
    assert grant.tokens == ()


async def _chunks(texts: list[str]) -> AsyncGenerator[dict[str, Any], None]:
    for text in texts:
        yield {"choices": [{"index": 0, "delta": {"content": text}}]}


async def test_a_stream_without_usage_is_charged_its_estimate_plus_its_text() -> None:
    policy = _policy(tenant={"tpm": 30})
    clock = FakeClock()
    limiter = InProcessRateLimiter(clock)
    limits = _limits(limiter, policy)
    request = _request(policy)
    grant = await limits.admit(request)  # 10 of 30 estimated
    chunks = _chunks(["one two ", "three four five"])
    outcome = StreamOutcome(chunks, DecisionBuilder(request).decision())
    settled = settle_outcome(limits, grant, outcome, "m")
    assert isinstance(settled, StreamOutcome)
    assert [chunk async for chunk in settled.chunks]
    await asyncio.sleep(0)  # the correction runs in its own task
    await asyncio.sleep(0)
    # 10 + 5 words = 15 used: 15 left, so one more 10-token prompt fits, a second not.
    await limits.admit(request)
    with pytest.raises(RateLimited) as refused:
        await limits.admit(request)
    assert refused.value.headers["x-ratelimit-remaining-tokens"] == "5"


async def test_refusals_are_counted_by_the_exhausted_scope() -> None:
    policy = _policy(tenant={"rpm": 10}, key={"rpm": 1})
    metrics = GatewayMetrics()
    limits = _limits(InProcessRateLimiter(FakeClock()), policy, metrics)
    await limits.admit(_request(policy))
    with pytest.raises(RateLimited) as refused:
        await limits.admit(_request(policy))
    assert refused.value.scope == "key"
    assert refused.value.headers["x-ratelimit-limit-requests"] == "1"  # the tightest
    counted = metrics.registry.get_sample_value(
        "gateway_rate_limited_total", {"tenant": "acme", "scope": "key"}
    )
    assert counted == 1


async def test_hits_count_tokens_keeps_a_hit_charged_with_its_usage() -> None:
    clock = FakeClock()
    for counts, left_after_hit in ((False, 30), (True, 13)):
        policy = _policy(tenant={"tpm": 30}, hits_count_tokens=counts)
        limiter = InProcessRateLimiter(clock)
        limits = _limits(limiter, policy)
        grant = await limits.admit(_request(policy))  # 10 estimated
        limits.settle(grant, 17, hit=True)  # the served answer's usage
        await asyncio.sleep(0)
        verdict = await limiter.acquire([RateBucket("t:acme:tk", 30, 30, 0)])
        assert verdict.states[0].remaining == left_after_hit


@pytest.mark.parametrize(
    "rate_limits",
    [{"tenant": {"rpm": 0}}, {"key": {"tpm": -1}}, {"tenant": {"rps": 5}}, {"burst": 3}],
)
def test_bad_limits_are_policy_errors(rate_limits: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Policy.model_validate({"rate_limits": rate_limits})
