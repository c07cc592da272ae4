"""Shadow verification with in-process fakes behind the project's protocols: what is
judged and counted, what is never sampled, the budget, the model judge's cost, and the
judge's error rate measured on exact repeats."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from gateway.adaptive.shadow import ShadowVerifier
from gateway.adaptive.stats import AdaptiveStats, Scope
from gateway.auth import Principal
from gateway.pipeline.decision import Decision
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.values import MemoryInjection, QueryEmbedding, SemanticDiagnostics
from gateway.policy.models import Policy
from gateway.providers.protocol import UpstreamReport
from gateway.storage.protocols import CachedCompletion, SemanticEntry
from gateway.testing.fakes import MemoryCounterStore, TableEmbedder
from tests.unit.test_semantic_stage import StubComparator


def _completion(text: str, total_tokens: int = 30) -> dict[str, Any]:
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": total_tokens},
    }


class JudgeProvider:
    """A judge model: answers `answer`, optionally only after `release` is set."""

    def __init__(self, answer: str = "Yes") -> None:
        self.answer = answer
        self.calls = 0
        self.release: asyncio.Event | None = None

    def has_model(self, model: str) -> bool:
        return True

    async def complete(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> dict[str, Any]:
        self.calls += 1
        if self.release is not None:
            await self.release.wait()
        return _completion(self.answer, total_tokens=103) | {
            "usage": {"prompt_tokens": 100, "completion_tokens": 3, "total_tokens": 103}
        }

    def stream(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> AsyncGenerator[dict[str, Any], None]:
        raise NotImplementedError

    async def embed(self, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def close(self) -> None:
        return None


def _policy(**adaptive: Any) -> Policy:
    settings = {"mode": "observe", "sample_rate": 1.0, **adaptive}
    return Policy.model_validate({"semantic_cache": {"adaptive": settings}})


def _ctx(policy: Policy, stored_answer: str = "Nine minutes.", similarity: float = 0.9) -> Decision:
    request = ChatRequest(
        request_id="r",
        principal=Principal("acme"),
        model="m",
        body={"model": "m", "messages": [{"role": "user", "content": "boil an egg how long"}]},
        policy=policy,
    )
    entry = SemanticEntry(
        entry_id="e1",
        tenant="acme",
        model="m",
        fingerprint="f",
        query_text="how long to boil an egg",
        completion=_completion(stored_answer),
        created_at=0.0,
        expires_at=1e12,
    )
    return Decision(
        request,
        Layer.MISS,
        Reason.BELOW_THRESHOLD,
        diagnostics=SemanticDiagnostics(
            adaptive_candidates=((entry, similarity),), adaptive_language="en"
        ),
        query_embedding=QueryEmbedding("boil an egg how long", None),
    )


def _verifier(
    stats: AdaptiveStats, provider: JudgeProvider | None = None, cost_per_token: float = 0.0
) -> ShadowVerifier:
    return ShadowVerifier(
        stats,
        StubComparator(),  # type: ignore[arg-type]
        # Identical answers: cosine 1; different ones: orthogonal.
        TableEmbedder(),
        provider or JudgeProvider(),
        cost=lambda model, prompt, completion: (prompt + completion) * cost_per_token,
        rng=random.Random(1),
    )


def _tallies(stats: AdaptiveStats) -> dict[str, float]:
    return stats.view(Scope("acme")).tallies


async def test_a_miss_whose_fresh_answer_agrees_is_a_hit_left_on_the_table() -> None:
    stats = AdaptiveStats(MemoryCounterStore())
    verifier = _verifier(stats, cost_per_token=0.001)
    verifier.schedule(_ctx(_policy()), _completion("Nine  minutes."))
    await verifier.drain()
    tallies = _tallies(stats)
    assert tallies["shadow_judged"] == 1 and tallies["judge_calls"] == 1
    assert tallies["shadow_accepted"] > 0.9  # corrected for the judge's error prior
    assert tallies["left_tokens"] == pytest.approx(30 * tallies["shadow_accepted"])
    assert tallies["left_cost_usd"] == pytest.approx(0.03 * tallies["shadow_accepted"])
    buckets = stats.view(Scope("acme", language="en")).buckets
    assert sum(buckets.traffic) == 1 and buckets.total_judged() == 1


async def test_a_different_fresh_answer_is_judged_not_servable() -> None:
    stats = AdaptiveStats(MemoryCounterStore())
    verifier = _verifier(stats)
    verifier.schedule(_ctx(_policy()), _completion("Twelve minutes for a duck egg."))
    await verifier.drain()
    assert _tallies(stats)["shadow_judged"] == 1
    # Corrected with the bucket prior (0.9) and the judge's 2 % prior miss rate.
    assert _tallies(stats)["shadow_accepted"] < 0.2


@pytest.mark.parametrize("case", ["memory", "bypass", "off", "below_floor", "not_sampled"])
async def test_never_judged(case: str) -> None:
    stats = AdaptiveStats(MemoryCounterStore())
    verifier = _verifier(stats)
    policy = _policy(mode="off") if case == "off" else _policy()
    if case == "not_sampled":
        policy = _policy(sample_rate=0.0)
    ctx = _ctx(policy, similarity=0.7 if case == "below_floor" else 0.9)
    if case == "memory":
        ctx = dataclasses.replace(ctx, memory=MemoryInjection(tokens=40))
    if case == "bypass":
        ctx = dataclasses.replace(ctx, layer=Layer.BYPASS, reason=Reason.MEMORY_PERSONALIZED)
    verifier.schedule(ctx, _completion("Nine minutes."))
    await verifier.drain()
    assert _tallies(stats)["judge_calls"] == 0
    assert sum(stats.view(Scope("acme")).buckets.traffic) == 0


async def test_a_sampled_miss_stands_for_the_unsampled_ones_in_the_traffic() -> None:
    stats = AdaptiveStats(MemoryCounterStore())
    verifier = _verifier(stats)
    for _ in range(40):
        verifier.schedule(_ctx(_policy(sample_rate=0.25)), _completion("Nine minutes."))
    await verifier.drain()
    judged = _tallies(stats)["judge_calls"]
    assert 0 < judged < 40
    # Only the sampled ones were checked; each counts 1 / 0.25 in its bucket.
    assert sum(stats.view(Scope("acme")).buckets.traffic) == pytest.approx(4 * judged)


async def test_the_model_judge_reports_its_tokens_and_cost() -> None:
    stats = AdaptiveStats(MemoryCounterStore())
    provider = JudgeProvider("Yes")
    verifier = _verifier(stats, provider, cost_per_token=0.01)
    verifier.schedule(_ctx(_policy(judge="model", judge_model="judge")), _completion("x"))
    await verifier.drain()
    tallies = _tallies(stats)
    assert provider.calls == 1 and tallies["judge_tokens"] == 103
    assert tallies["judge_cost_usd"] == pytest.approx(1.03)
    assert tallies["shadow_accepted"] > 0.9


async def test_judge_calls_in_flight_and_tokens_per_minute_are_bounded() -> None:
    stats = AdaptiveStats(MemoryCounterStore())
    provider = JudgeProvider("Yes")
    provider.release = asyncio.Event()
    verifier = _verifier(stats, provider)
    policy = _policy(judge="model", judge_model="judge", max_judges_in_flight=1)
    for _ in range(3):
        verifier.schedule(_ctx(policy), _completion("x"))
    await asyncio.sleep(0.05)
    assert provider.calls == 1 and verifier.skipped_total == 2
    provider.release.set()
    await verifier.drain()
    # Each judgment is estimated at ~200 tokens: a budget of 250 a minute fits one.
    tight = _policy(judge="model", judge_model="judge", judge_tokens_per_minute=250)
    stats2 = AdaptiveStats(MemoryCounterStore())
    verifier2 = _verifier(stats2, JudgeProvider("Yes"))
    for _ in range(3):
        verifier2.schedule(_ctx(tight), _completion("x"))
        await verifier2.drain()
    assert _tallies(stats2)["judge_calls"] == 1 and verifier2.skipped_total == 2


async def test_exact_repeats_measure_the_judges_miss_rate() -> None:
    stats = AdaptiveStats(MemoryCounterStore())
    verifier = _verifier(stats)
    before = stats.judge_errors("local").miss_rate
    for _ in range(5):
        ctx = _ctx(_policy())
        read: asyncio.Future[CachedCompletion | None] = asyncio.get_running_loop().create_future()
        # The same request answered differently (a sampled model): the judge says "different".
        read.set_result(CachedCompletion(_completion("Eight minutes."), "acme", "m", 0.0))
        ctx = dataclasses.replace(
            ctx,
            reason=Reason.CLIENT_NO_CACHE,
            diagnostics=SemanticDiagnostics(adaptive_language="en"),
            prior_exact_read=read,
        )
        verifier.schedule(ctx, _completion("Nine minutes."))
        await verifier.drain()
    assert stats.judge_truths("local") == {"same_missed": 5, "same_seen": 5}
    assert stats.judge_errors("local").miss_rate > before


async def test_an_audited_false_semantic_hit_reaches_the_statistics_at_once() -> None:
    from gateway.adaptive.serving import AdaptiveServing
    from gateway.pipeline.audit import HitAuditor

    stats = AdaptiveStats(MemoryCounterStore())
    auditor = HitAuditor(
        JudgeProvider("Twelve minutes."),  # the fresh answer: not what was served
        None,
        random.Random(1),
        on_semantic_verdict=AdaptiveServing(stats).audit_verdict,
    )
    policy = Policy.model_validate({"audit": {"sample_rate": 1.0}})
    ctx = _ctx(policy)
    ctx = dataclasses.replace(
        ctx,
        layer=Layer.SEMANTIC,
        reason=None,
        diagnostics=dataclasses.replace(ctx.diagnostics, similarity=0.93),
        served=None,
    )
    assert auditor.maybe_audit(ctx, _completion("Nine minutes."))
    await auditor.drain()
    tallies = stats.view(Scope("acme", language="en")).tallies
    assert tallies["audit_verdicts"] == 1 and tallies["audit_false"] == 1
    buckets = stats.view(Scope("acme")).buckets
    assert buckets.total_judged() == 1 and sum(buckets.judged_same) == 0
