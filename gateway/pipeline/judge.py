"""The one decision rule of the semantic cache: may the answer stored for one ask serve
another? Used by the semantic stage, the adaptive shadow, warm-up and `gateway eval`.

Decided on what separates the two asks (`gateway/difference/`), strongest first:

1. a meaning-bearing difference (a quoted or code span, a number, an operator, a role
   swap, the question's focus; a quantifier, conjunction, preposition... put for
   another of its class, or the only thing that differs) -> `meaning_differs`, at any
   similarity;
2. nothing but rewording (templates, articles, politeness, punctuation, inflections,
   known synonyms, a block moved) -> served from `preserving_floor` up (a reorder the
   analysis cannot vouch for goes through the checks below first);
3. a content word the lexicon does not know: the embedding settles it. The entity
   comparison refuses another number, name, date...; an added or swapped content word
   refuses when it is the only change (`strict_band_terms`); the structure guard vets
   word order; then the calibrated similarity must reach the serving threshold, or, in
   the band [`review.band_floor`, threshold), a chat-model reviewer decides. A chat
   model also sees candidates the soft local checks refused (a `term` or `question`
   mismatch, the structure guard) and may overrule them; never a hard mismatch.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from gateway.difference.analysis import Difference
from gateway.entities.entities import EntityComparator
from gateway.pipeline.reasons import Reason
from gateway.policy.models import SemanticCachePolicy
from gateway.review.protocol import MODEL, Reviewer, ReviewVerdict

# Entity mismatches a chat-model reviewer may overrule: another content word or question
# word, where paraphrases land too. Numbers, IDs, dates, names, negation... never.
SOFT_MISMATCH_KINDS = frozenset({"term", "question"})


@dataclass(frozen=True, slots=True)
class CandidateDecision:
    accepted: bool
    reason: Reason | None  # why not, when not accepted
    mismatch_kinds: tuple[str, ...] = ()
    review_verdict: str | None = None  # accepted | rejected | unavailable
    review_ms: float = 0.0
    error: str | None = None  # exception type of a failed review
    # Below the serving threshold, but it passed every check (entities, content words,
    # the structure guard): what the adaptive statistics judge in the shadow.
    passed_checks: bool = False
    # What separated the two asks, on a hit (`Difference.code`: reorder, synonym...)
    difference: str | None = None


class StructureGuard(Protocol):
    """A cheap, synchronous pair check (the local pair model) for candidates above the
    review band: embedders put word-order and role swaps ("flights from A to B" vs "B to
    A", "X hired Y" vs "Y hired X") at near-identical similarity, above any threshold."""

    def decide(self, query: str, candidate: str, similarity: float) -> ReviewVerdict: ...


def examination_floor(policy: SemanticCachePolicy, reviewer: Reviewer | None = None) -> float:
    """The lowest similarity any candidate can be served at."""
    floor = policy.preserving_floor if policy.difference_check else 1.0
    return min(floor, _band_floor(policy, reviewer), policy.accept_threshold)


def _band_floor(policy: SemanticCachePolicy, reviewer: Reviewer | None) -> float:
    """Where the review band starts: `review_min_similarity` (no band by default), or
    `review.band_floor` for a chat-model reviewer."""
    if _is_model(policy, reviewer):
        return min(policy.review_min_similarity, policy.review.band_floor)
    return policy.review_min_similarity


def _is_model(policy: SemanticCachePolicy, reviewer: Reviewer | None) -> bool:
    return reviewer is not None and policy.review.enabled and reviewer.kind == MODEL


async def judge_candidate(
    query: str,
    candidate: str,
    similarity: float,
    policy: SemanticCachePolicy,
    comparator: EntityComparator,
    reviewer: Reviewer | None,
    guard: StructureGuard | None = None,
    stored_answer: str | None = None,
    *,
    accept_threshold: float | None = None,
    examine_from: float | None = None,
    context: str = "",
    tenant: str | None = None,
) -> CandidateDecision:
    """May the answer stored for `candidate` serve `query`? `stored_answer` is shown to
    a chat-model reviewer.

    `accept_threshold` replaces the policy's (the adaptive serving threshold);
    `examine_from` runs the checks on candidates down to there too (the adaptive floor):
    one that passes them below the threshold is a miss with `passed_checks`. `context`
    is the material both requests carry (the difference analysis reads the question's
    focus against it); `tenant` is charged for a review."""
    accept = policy.accept_threshold if accept_threshold is None else accept_threshold
    band_floor = _band_floor(policy, reviewer)
    examined_from = band_floor if examine_from is None else min(band_floor, examine_from)
    if similarity < min(examined_from, accept, examination_floor(policy, reviewer)):
        return CandidateDecision(False, Reason.BELOW_THRESHOLD)
    difference = None
    if policy.difference_check:
        difference = comparator.difference(query, candidate, context)
        refusal = difference.refusal(policy.near_identical_tokens, policy.short_ask_tokens)
        if refusal:
            return CandidateDecision(False, Reason.MEANING_DIFFERS, mismatch_kinds=refusal)
    rewording = difference is not None and difference.only_preserving
    if rewording and difference is not None and not difference.reordered:
        # Nothing but rewording separates them: the embedding only has to confirm the
        # topic, down to the floor.
        if similarity >= policy.preserving_floor:
            return CandidateDecision(True, None, difference=difference.code())
        return CandidateDecision(False, Reason.BELOW_THRESHOLD)
    if similarity < (policy.preserving_floor if rewording else min(examined_from, accept)):
        return CandidateDecision(False, Reason.BELOW_THRESHOLD)
    local = _local_checks(query, candidate, similarity, policy, comparator, guard, difference)
    model = _is_model(policy, reviewer)
    if local is not None and not (model and _soft(local)):
        return local
    if local is None:
        if rewording or similarity >= accept:
            return CandidateDecision(True, None, difference=_code(difference))
        if similarity < band_floor:
            return CandidateDecision(False, Reason.BELOW_THRESHOLD, passed_checks=True)
    # In the review band, or refused by a soft local check a chat model may overrule.
    if reviewer is None or not policy.review.enabled:
        return CandidateDecision(False, Reason.REVIEW_UNAVAILABLE, review_verdict="unavailable")
    return await _review(
        reviewer, query, candidate, similarity, policy, stored_answer, tenant, difference
    )


def _local_checks(
    query: str,
    candidate: str,
    similarity: float,
    policy: SemanticCachePolicy,
    comparator: EntityComparator,
    guard: StructureGuard | None,
    difference: Difference | None,
) -> CandidateDecision | None:
    """The entity comparison, the content-word check and the structure guard: their
    refusal, or None when all pass."""
    if policy.entity_check:
        verdict = comparator.compare(query, candidate)
        if not verdict.agree:
            kinds = tuple(m.kind for m in verdict.mismatches)
            return CandidateDecision(False, Reason.ENTITY_MISMATCH, mismatch_kinds=kinds)
        # In an otherwise near-identical text (the term check aligns only those), a
        # content word swapped for another ("time" / "space complexity", 原因 / 原理) is
        # a different question more often than a paraphrase, and so are several added;
        # one word only added is when it is all that changed ("X 的释是什么意思" / "X 是
        # 什么意思"), else the embedding settles it (LCQMC's duplicates add such words:
        # 淘宝网上买东西).
        if policy.strict_band_terms:
            changes = comparator.content_changes(query, candidate)
            alone = difference is None or difference.changed_tokens <= 1
            if changes and (alone or len(changes) > 1 or changes[0] != "add"):
                return CandidateDecision(False, Reason.ENTITY_MISMATCH, mismatch_kinds=("term",))
    if (
        policy.structure_guard
        and guard is not None
        and not guard.decide(query, candidate, similarity).same_meaning
    ):
        return CandidateDecision(False, Reason.REVIEW_REJECTED, review_verdict="rejected")
    return None


def _soft(decision: CandidateDecision) -> bool:
    """A local refusal a chat-model reviewer may overrule."""
    if decision.reason is Reason.REVIEW_REJECTED:
        return True
    kinds = decision.mismatch_kinds
    return (
        decision.reason is Reason.ENTITY_MISMATCH
        and bool(kinds)
        and set(kinds) <= (SOFT_MISMATCH_KINDS)
    )


async def _review(
    reviewer: Reviewer,
    query: str,
    candidate: str,
    similarity: float,
    policy: SemanticCachePolicy,
    stored_answer: str | None,
    tenant: str | None,
    difference: Difference | None,
) -> CandidateDecision:
    started = time.perf_counter()
    try:
        verdict = await asyncio.wait_for(
            reviewer.review(
                query,
                candidate,
                similarity,
                stored_answer=stored_answer,
                tenant=tenant,
                budget_tokens=policy.review.tokens_per_tenant_per_hour,
            ),
            policy.review.timeout_seconds,
        )
    except Exception as exc:  # includes the timeout: a miss costs less than a wrong answer
        return CandidateDecision(
            False,
            Reason.REVIEW_UNAVAILABLE,
            review_verdict="unavailable",
            review_ms=_ms_since(started),
            error=type(exc).__name__,
        )
    if verdict.same_meaning:
        return CandidateDecision(
            True,
            None,
            review_verdict="accepted",
            review_ms=_ms_since(started),
            difference=_code(difference),
        )
    return CandidateDecision(
        False, Reason.REVIEW_REJECTED, review_verdict="rejected", review_ms=_ms_since(started)
    )


def _code(difference: Difference | None) -> str | None:
    return None if difference is None else difference.code()


def stored_answer_text(completion: dict[str, Any]) -> str | None:
    """The text a stored completion answered with: its first choice's content, or its
    tool calls as JSON (a reviewer judges those too)."""
    try:
        message = completion["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str) and content:
        return content
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    return orjson.dumps(calls).decode() if calls else None


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
