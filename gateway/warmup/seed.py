"""`gateway cache import --seed-adaptive`: recorded pairs seed the adaptive statistics.

A history file holds answers to requests that are near each other. For each record
about to be stored, its best semantic candidate (an entry stored earlier, from the
file or already in the cache, with the same compatibility fingerprint) is found as the
live semantic stage finds it, and:

- if the candidate passed every structural and entity check and scored in
  [floor, serving threshold): the local judge (`LocalAgreementJudge`) compares the two
  recorded answers, as shadow verification compares the fresh answer with the stored
  one, and the verdict, corrected for the local judge's error rates, is added to the
  tenant's statistics (tenant, language and model scopes) with one unit of traffic:
  every such record is judged, so each stands for itself (the shadow's sampled misses
  stand for 1 / sample_rate);
- if the best candidate at or above the floor was refused for a hard entity mismatch
  (`adaptive/known_different.py`), the local judge's verdict on it counts toward that
  judge's false-accept rate.

A candidate at or above the serving threshold would have been served: nothing to judge
(live, only the served-hit audit looks at those). Nothing is seeded where the policy's
`semantic_cache.adaptive.mode` is `off` or the semantic cache is disabled. No model is
called: the judge is the local one whatever the policy's `judge` says.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from gateway.adaptive.judges import JudgeVerdict, LocalAgreementJudge, ShadowCase
from gateway.adaptive.known_different import is_known_different
from gateway.adaptive.serving import AdaptiveServing
from gateway.adaptive.stats import AdaptiveStats, Scope, scopes_of
from gateway.components import SemanticComponents
from gateway.nlp import detect_language
from gateway.pipeline.judge import judge_candidate, stored_answer_text
from gateway.pipeline.request import ChatRequest
from gateway.storage import Storage
from gateway.storage.protocols import SemanticEntry, VectorIndex
from gateway.turn import ask_length


@dataclass(slots=True)
class SeedSummary:
    verdicts: int = 0  # pairs in [floor, threshold) judged and added to the statistics
    judged_same: int = 0  # of those, the local judge said "same" (before correction)
    known_different: int = 0  # hard-mismatch pairs judged (the false-accept rate)
    known_different_accepted: int = 0  # of those, the judge said "same"

    def to_dict(self) -> dict[str, int]:
        return {
            "verdicts": self.verdicts,
            "judged_same": self.judged_same,
            "known_different": self.known_different,
            "known_different_accepted": self.known_different_accepted,
        }

    def line(self) -> str:
        return (
            f"seeded   {self.verdicts} adaptive verdicts ({self.judged_same} judged same), "
            f"{self.known_different} known-different pairs "
            f"({self.known_different_accepted} judged same)"
        )


class AdaptiveSeeder:
    def __init__(
        self, stats: AdaptiveStats, components: SemanticComponents, index: VectorIndex
    ) -> None:
        self._stats = stats
        self._serving = AdaptiveServing(stats)
        self._components = components
        self._index = index
        self.summary = SeedSummary()

    async def seed(self, request: ChatRequest, completion: dict[str, Any]) -> None:
        """Before `request`'s record is stored: judge it against its best candidate."""
        policy = request.policy.semantic_cache
        if not policy.enabled or policy.adaptive.mode == "off":
            return
        turn = request.turn
        if turn.index is None or not turn.ask or ask_length(turn.ask) > policy.max_query_chars:
            return  # not matched by meaning live either
        embedder = self._components.embedder
        vector = (await embedder.embed([turn.ask]))[0]
        candidates = await self._index.search(request.fingerprint, vector, policy.top_k)
        language = detect_language(turn.ask)
        accept = self._serving.serving_threshold(request.tenant, language, request.model, policy)
        floor = policy.adaptive.floor
        different: SemanticEntry | None = None
        for entry, cosine in candidates:
            if entry.entry_id == request.exact_key:
                continue  # this very request, stored before
            similarity = embedder.calibrate(cosine, language)
            if similarity < floor:
                break  # sorted: the rest are lower still
            decision = await judge_candidate(
                turn.ask,
                entry.query_text,
                similarity,
                policy,
                self._components.comparator,
                None,
                self._components.guard,
                accept_threshold=accept,
                examine_from=floor,
            )
            if decision.accepted:
                break  # it would have been served
            if decision.passed_checks:
                await self._add_verdict(request, language, entry, similarity, completion)
                break
            if different is None and is_known_different(decision.mismatch_kinds):
                different = entry
        if different is not None:
            verdict = await self._judge(request, different, completion)
            self._stats.record_judge_truth("local", truly_same=False, says_same=verdict.same)
            self.summary.known_different += 1
            self.summary.known_different_accepted += int(verdict.same)

    async def _judge(
        self, request: ChatRequest, entry: SemanticEntry, completion: dict[str, Any]
    ) -> JudgeVerdict:
        judge = LocalAgreementJudge(
            self._components.comparator,
            self._components.embedder,
            request.policy.semantic_cache.adaptive.agreement_min_cosine,
        )
        case = ShadowCase(
            query=request.turn.ask,
            candidate=entry.query_text,
            stored_answer=stored_answer_text(entry.completion) or "",
            fresh_answer=stored_answer_text(completion) or "",
        )
        return await judge.judge(case)

    async def _add_verdict(
        self,
        request: ChatRequest,
        language: str,
        entry: SemanticEntry,
        similarity: float,
        completion: dict[str, Any],
    ) -> None:
        verdict = await self._judge(request, entry, completion)
        errors = self._stats.judge_errors("local")
        if not errors.informative:
            return
        corrected = errors.corrected(
            verdict.same, self._stats.prior_same(Scope(request.tenant), similarity)
        )
        scopes = scopes_of(request.tenant, language, request.model)
        self._stats.add_traffic(scopes, similarity, 1.0)
        self._stats.add_verdict(scopes, similarity, corrected)
        self._stats.add_tally(scopes, "seed_verdicts", 1.0)
        self.summary.verdicts += 1
        self.summary.judged_same += int(verdict.same)


async def open_seeder(
    stack: AsyncExitStack, storage: Storage, components: SemanticComponents
) -> AdaptiveSeeder:
    """The seeder over the storage's adaptive counters; `stack` writes them at the end
    (before the storage closes, as it was opened before)."""
    stats = AdaptiveStats(storage.adaptive)
    await stats.start()
    stack.push_async_callback(stats.close)
    return AdaptiveSeeder(stats, components, storage.vectors)
