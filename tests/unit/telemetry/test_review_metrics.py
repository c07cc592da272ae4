"""A chat-model reviewer's tokens, cost and verdicts on `/metrics`."""

from __future__ import annotations

import pytest

from gateway.review.errors import ReviewError
from gateway.review.litellm_reviewer import LiteLLMReviewer
from gateway.review.local import LocalPairReviewer
from gateway.review.usage import usage_of
from gateway.telemetry.exports import export_review
from gateway.telemetry.metrics import GatewayMetrics
from gateway.testing.fake_provider import FakeProvider


async def test_review_tokens_cost_and_verdicts_are_exported() -> None:
    reviewer = LiteLLMReviewer(FakeProvider(answer="yes", cost_per_token_usd=0.25), "judge")
    metrics = GatewayMetrics()
    export_review(metrics, usage_of(reviewer))
    await reviewer.review("a", "b", 0.9, tenant="acme", budget_tokens=1000)
    await reviewer.review("a", "c", 0.9, tenant="acme", budget_tokens=1000)
    reviewer.budget.settle("acme", 1000)
    with pytest.raises(ReviewError):  # the budget is spent
        await reviewer.review("a", "d", 0.9, tenant="acme", budget_tokens=1000)

    def sample(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(
            name, {"tenant": "acme", "model": "judge", **labels}
        )

    assert sample("gateway_review_tokens_total") == 4  # 1 + 1 reported per call
    assert sample("gateway_review_cost_usd_total") == 1.0
    assert sample("gateway_review_calls_total", verdict="accepted") == 2
    assert sample("gateway_review_calls_total", verdict="unavailable") == 1
    assert sample("gateway_review_budget_refusals_total") == 1
    assert b"gateway_review_tokens_total" in metrics.render()


def test_the_local_reviewer_exports_nothing() -> None:
    metrics = GatewayMetrics()
    assert usage_of(LocalPairReviewer()) is None
    export_review(metrics, usage_of(LocalPairReviewer()))
    export_review(metrics, usage_of(None))
    assert b"gateway_review_tokens" not in metrics.render()
