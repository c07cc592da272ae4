"""One request's admission (`gateway/limits/admission.py`): the request check runs at
once and is awaited by the pipeline; the token charge waits for the forward, so a
cache hit charges no tokens and needs no refund."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from gateway.auth import Principal
from gateway.limits.admission import RateAdmission
from gateway.limits.headers import RateLimited
from gateway.limits.service import RequestLimits
from gateway.pipeline.request import ChatRequest
from gateway.policy.models import Policy
from gateway.storage.embedded.rate_limiter import InProcessRateLimiter


class CountingLimiter(InProcessRateLimiter):
    """The in-process limiter, counting the units charged per bucket kind."""

    def __init__(self) -> None:
        super().__init__(clock=lambda: 0.0)
        self.charged: dict[str, int] = {"rq": 0, "tk": 0}
        self.calls = 0

    async def acquire(self, buckets: Any) -> Any:
        self.calls += 1
        verdict = await super().acquire(buckets)
        if verdict.allowed:
            for bucket in buckets:
                self.charged[bucket.key.rsplit(":", 1)[1]] += bucket.cost
        return verdict


def _setup(**rate_limits: Any) -> tuple[RequestLimits, CountingLimiter, ChatRequest]:
    policy = Policy.model_validate({"rate_limits": rate_limits})
    limiter = CountingLimiter()
    limits = RequestLimits(limiter, lambda tenant: policy, lambda model, body: 10, len)
    body = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
    request = ChatRequest("r", Principal("acme", key_id="k1"), "m", body, policy)
    return limits, limiter, request


async def test_a_hit_charges_the_request_and_no_tokens() -> None:
    limits, limiter, request = _setup(tenant={"rpm": 10, "tpm": 100})
    admission = RateAdmission(limits, request)
    await admission.admitted()
    assert limiter.charged == {"rq": 1, "tk": 0}
    assert not admission.grant.tokens  # nothing to settle after a hit


async def test_a_forward_charges_the_estimate_before_the_call() -> None:
    limits, limiter, request = _setup(tenant={"rpm": 10, "tpm": 100})
    admission = RateAdmission(limits, request)
    await admission.admitted()
    await admission.before_forward()
    assert limiter.charged == {"rq": 1, "tk": 10}
    assert admission.grant.estimate == 10 and len(admission.grant.tokens) == 1


async def test_a_forward_over_the_token_limit_is_refused() -> None:
    limits, limiter, request = _setup(tenant={"tpm": 100, "token_burst": 15})
    first = RateAdmission(limits, request)
    await first.admitted()
    await first.before_forward()
    second = RateAdmission(limits, request)
    await second.admitted()  # no request limit: admitted
    with pytest.raises(RateLimited):
        await second.before_forward()
    assert limiter.charged["tk"] == 10


async def test_a_request_over_the_request_limit_is_refused_when_awaited() -> None:
    limits, _, request = _setup(key={"rpm": 60, "request_burst": 1})
    await RateAdmission(limits, request).admitted()
    refused = RateAdmission(limits, request)
    with pytest.raises(RateLimited):
        await refused.admitted()


async def test_hits_that_count_tokens_are_charged_up_front() -> None:
    limits, limiter, request = _setup(tenant={"tpm": 100}, hits_count_tokens=True)
    admission = RateAdmission(limits, request)
    await admission.admitted()
    assert limiter.charged["tk"] == 10
    await admission.before_forward()  # charged once only
    assert limiter.charged["tk"] == 10


async def test_no_limits_no_limiter_call() -> None:
    limits, limiter, request = _setup()
    admission = RateAdmission(limits, request)
    await admission.admitted()
    await admission.before_forward()
    assert limiter.calls == 0


async def test_closing_an_unawaited_check_keeps_what_it_charged() -> None:
    limits, limiter, request = _setup(tenant={"rpm": 10, "tpm": 100}, hits_count_tokens=True)
    admission = RateAdmission(limits, request)
    await admission.close()  # the pipeline failed before awaiting it
    assert limiter.calls == 1 and admission.grant.estimate == 10


async def test_a_refusal_nobody_awaited_leaves_nothing_in_the_log() -> None:
    limits, _, request = _setup(key={"rpm": 60, "request_burst": 1})
    await RateAdmission(limits, request).admitted()
    reported: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        abandoned = RateAdmission(limits, request)  # refused; its client left
        for _ in range(3):
            await asyncio.sleep(0)
        del abandoned
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert reported == []
