"""Pairs known to be different (a near miss refused for a hard entity mismatch) measure
a judge's false-accept rate: which refusals count, the sampling rule (the shadow's),
and the conservative estimate the verdicts are corrected with."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from gateway.adaptive.judge_error import JudgeErrorEstimate, JudgeErrors, wilson_upper_bound
from gateway.adaptive.known_different import HARD_MISMATCH_KINDS, is_known_different
from gateway.adaptive.stats import AdaptiveStats, Scope
from gateway.difference.analysis import Difference
from gateway.entities.entities import EntityVerdict, Mismatch
from gateway.pipeline.decision import Decision
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.values import MemoryInjection, QueryEmbedding, SemanticDiagnostics
from gateway.storage.protocols import SemanticEntry
from gateway.testing.fakes import MemoryCounterStore as MemoryStore
from tests.unit.adaptive.test_shadow import (
    JudgeProvider,
    _completion,
    _ctx,
    _policy,
    _verifier,
)

STORED_ANSWER = "Two eggs hold about 140 kcal."


class KindComparator:
    """The asks disagree in one slot of `kind`; answers agree only when equal."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def content_changes(self, query: str, candidate: str) -> tuple[str, ...]:
        return ()

    def difference(self, query: str, candidate: str, context: str = "") -> Difference:
        # A content word the lexicon does not know: the embedding and the checks decide.
        return Difference((), (), ("word",), changed_tokens=2)

    def compare(self, query: str, candidate: str) -> EntityVerdict:
        if query == candidate:
            return EntityVerdict(mismatches=())
        return EntityVerdict(mismatches=(Mismatch(self.kind, "3", "2"),))


def _entry(query_text: str = "calories in 2 eggs") -> SemanticEntry:
    return SemanticEntry(
        entry_id="near",
        tenant="acme",
        model="m",
        fingerprint="f",
        query_text=query_text,
        completion=_completion(STORED_ANSWER),
        created_at=0.0,
        expires_at=1e12,
    )


def _near_miss_ctx(policy: Any, similarity: float = 0.95) -> Decision:
    """A miss whose best candidate (above the threshold) was refused for a number."""
    return dataclasses.replace(
        _ctx(policy),
        reason=Reason.ENTITY_MISMATCH,
        diagnostics=SemanticDiagnostics(
            adaptive_different=(_entry(), similarity), adaptive_language="en"
        ),
        query_embedding=QueryEmbedding("calories in 3 eggs", None),
    )


@pytest.mark.parametrize(
    ("kinds", "known"),
    [
        (("number",), True),
        (("date",), True),
        (("named_entity",), True),
        (("unit",), True),
        (("quoted",), True),
        (("term", "date"), True),
        (("term",), False),
        (("negation", "polarity"), False),
        (("language",), False),
        (("time_word", "question"), False),
        ((), False),
    ],
)
def test_only_hard_mismatches_make_a_pair_known_different(
    kinds: tuple[str, ...], known: bool
) -> None:
    assert is_known_different(kinds) is known


def test_every_hard_kind_is_one_the_entity_comparison_reports() -> None:
    from gateway.entities.entities import _RULES

    assert {kind for kind, _ in _RULES} >= HARD_MISMATCH_KINDS


async def test_a_sampled_near_miss_is_a_known_different_verdict_of_the_judge() -> None:
    stats = AdaptiveStats(MemoryStore())
    verifier = _verifier(stats)
    # The fresh answer to "3 eggs" differs from the stored one: the local judge says so.
    verifier.schedule(_near_miss_ctx(_policy()), _completion("Three eggs: about 210 kcal."))
    await verifier.drain()
    assert stats.judge_truths("local") == {"different_seen": 1}
    # Nothing reaches the buckets: it is no evidence about any threshold.
    assert stats.view(Scope("acme")).buckets.total_judged() == 0
    assert sum(stats.view(Scope("acme")).buckets.traffic) == 0


async def test_a_judge_that_says_same_to_a_known_different_pair_is_a_false_accept() -> None:
    stats = AdaptiveStats(MemoryStore())
    provider = JudgeProvider("Yes")
    verifier = _verifier(stats, provider)
    policy = _policy(judge="model", judge_model="judge")
    before = stats.judge_errors("model:judge").false_accept_rate
    for _ in range(5):
        verifier.schedule(_near_miss_ctx(policy), _completion("Three eggs: about 210 kcal."))
        await verifier.drain()
    assert provider.calls == 5
    assert stats.judge_truths("model:judge") == {"different_accepted": 5, "different_seen": 5}
    assert stats.judge_errors("model:judge").false_accept_rate > before
    assert stats.view(Scope("acme")).tallies["judge_calls"] == 5


@pytest.mark.parametrize("case", ["memory", "bypass", "off", "not_sampled", "over_budget"])
async def test_known_different_pairs_are_never_judged_where_the_shadow_never_is(
    case: str,
) -> None:
    stats = AdaptiveStats(MemoryStore())
    provider = JudgeProvider("Yes")
    verifier = _verifier(stats, provider)
    settings: dict[str, Any] = {"judge": "model", "judge_model": "judge"}
    if case == "off":
        settings["mode"] = "off"
    if case == "not_sampled":
        settings["sample_rate"] = 0.0
    if case == "over_budget":
        settings["judge_tokens_per_minute"] = 10  # a judgment is estimated at ~200
    ctx = _near_miss_ctx(_policy(**settings))
    if case == "memory":
        ctx = dataclasses.replace(ctx, memory=MemoryInjection(tokens=40))
    if case == "bypass":
        ctx = dataclasses.replace(ctx, layer=Layer.BYPASS, reason=Reason.MEMORY_PERSONALIZED)
    verifier.schedule(ctx, _completion("Three eggs: about 210 kcal."))
    await verifier.drain()
    assert provider.calls == 0
    assert stats.judge_truths("model:judge") == {}


@pytest.mark.parametrize(("kind", "known"), [("number", True), ("term", False)])
async def test_a_candidate_below_the_threshold_refused_in_the_shadow_counts_if_hard(
    kind: str, known: bool
) -> None:
    # Below the serving threshold the request path does not run the entity comparison:
    # the shadow's walk over the candidates does, and finds the refusal there.
    from gateway.adaptive.shadow import ShadowVerifier
    from gateway.testing.fakes import TableEmbedder

    stats = AdaptiveStats(MemoryStore())
    verifier = ShadowVerifier(stats, KindComparator(kind), TableEmbedder(), JudgeProvider())  # type: ignore[arg-type]
    ctx = dataclasses.replace(
        _ctx(_policy()),
        diagnostics=SemanticDiagnostics(
            adaptive_candidates=((_entry(), 0.9),), adaptive_language="en"
        ),
        query_embedding=QueryEmbedding("calories in 3 eggs", None),
    )
    verifier.schedule(ctx, _completion("Three eggs: about 210 kcal."))
    await verifier.drain()
    expected = {"different_seen": 1} if known else {}
    assert stats.judge_truths("local") == expected
    assert stats.view(Scope("acme")).buckets.total_judged() == 0  # it passed no check


def test_the_false_accept_rate_is_the_upper_bound_of_its_estimate() -> None:
    fresh = JudgeErrorEstimate()
    # No known-different pair yet: the prior (1 in 50) and its upper bound.
    assert fresh.false_accept_estimate() == pytest.approx(0.02)
    assert 0.05 < fresh.errors().false_accept_rate < 0.1
    careful = JudgeErrorEstimate(different_seen=500)
    assert careful.errors().false_accept_rate < 0.01  # evidence narrows it
    always_yes = JudgeErrorEstimate(different_seen=100, different_accepted=100)
    assert always_yes.errors().false_accept_rate > 0.7
    assert always_yes.errors().false_accept_rate > always_yes.false_accept_estimate()
    assert wilson_upper_bound(0.5, 0) == 1.0


def test_an_uninformative_judge_leaves_the_prior_as_it_was() -> None:
    useless = JudgeErrors(miss_rate=0.0, false_accept_rate=1.0)  # always "same"
    assert not useless.informative
    assert useless.corrected(True, 0.9) == 0.9 and useless.corrected(False, 0.9) == 0.9
    weak = JudgeErrors(miss_rate=0.02, false_accept_rate=0.7)
    strong = JudgeErrors(miss_rate=0.02, false_accept_rate=0.02)
    # A "same" from a judge that often accepts different pairs raises the prior less.
    assert 0.9 < weak.corrected(True, 0.9) < strong.corrected(True, 0.9)
    with pytest.raises(ValueError):
        JudgeErrors(false_accept_rate=1.5)


async def test_an_uninformative_judges_verdicts_are_not_counted() -> None:
    stats = AdaptiveStats(MemoryStore())
    for _ in range(2000):  # every known-different pair accepted
        stats.record_judge_truth("model:judge", truly_same=False, says_same=True)
    assert not stats.judge_errors("model:judge").informative
    verifier = _verifier(stats, JudgeProvider("Yes"))
    verifier.schedule(_ctx(_policy(judge="model", judge_model="judge")), _completion("x"))
    await verifier.drain()
    assert stats.view(Scope("acme")).tallies["judge_calls"] == 1
    assert stats.view(Scope("acme")).buckets.total_judged() == 0
