"""Shadow verification: after a semantic miss has been answered, would the best
candidate's stored answer have served it?

For a miss whose best candidate passed every check (entities, content words, the
structure guard) but scored below the serving threshold, down to the policy's floor:

a `sample_rate` share of them is checked and judged (`judges.py`), within the budget
(judge calls in flight, judge tokens per minute). The candidate's bucket counts
1 / sample_rate units of traffic (what serving from there would serve, estimated from
the sample), and the verdict, corrected for the judge's estimated error rates, one
verdict; an accepted one is a hit left on the table, with the tokens and cost its
answer took upstream. Unsampled misses cost nothing after the response.

Exact repeats forwarded again (`Cache-Control: no-cache` while the entry was still
there) are truly the same request: judging them measures the judge's miss rate. The
best candidate at or above the floor that the entity comparison refused for a hard
mismatch (`known_different`) is truly another request: judging it, in the same sample
and budget, measures the judge's false-accept rate.

Never sampled: bypassed requests, requests with memory injected, streams the client
aborted (their answer never reaches this point). All of it runs after the response, in
tasks bounded in number; what the client got never changes.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

from gateway.adaptive.budget import TokenWindow
from gateway.adaptive.judges import (
    LocalAgreementJudge,
    ModelJudge,
    ShadowCase,
    ShadowJudge,
)
from gateway.adaptive.known_different import is_known_different
from gateway.adaptive.stats import AdaptiveStats, Scope, scopes_of
from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.pipeline.decision import Decision
from gateway.pipeline.judge import StructureGuard, judge_candidate, stored_answer_text
from gateway.pipeline.reasons import Layer
from gateway.policy.models import AdaptivePolicy, Policy
from gateway.providers.protocol import Provider
from gateway.storage.protocols import CachedCompletion, SemanticEntry
from gateway.telemetry.recorder import CostEstimator, no_cost
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

# Shadow tasks waiting or running at once (checks included); more are dropped, counted.
MAX_PENDING_TASKS = 256


class ShadowVerifier:
    def __init__(
        self,
        stats: AdaptiveStats,
        comparator: EntityComparator,
        embedder: Embedder,
        provider: Provider,
        guard: StructureGuard | None = None,
        cost: CostEstimator = no_cost,
        rng: random.Random | None = None,
    ) -> None:
        self._stats = stats
        self._comparator = comparator
        self._embedder = embedder
        self._provider = provider
        self._guard = guard
        self._cost = cost
        self._rng = rng or random.Random()
        self._tokens = TokenWindow()
        self._tasks: set[asyncio.Task[None]] = set()
        self._judging: dict[str, int] = {}
        self._model_judges: dict[str, ModelJudge] = {}
        self._failures = ThrottledLogger(logger, interval_seconds=60.0)
        self.skipped_total = 0  # sampled but over a budget, or too many tasks
        self.errors_total = 0  # judgments that failed (not counted)

    # --- the request side: decide and hand off ---------------------------------------------

    @staticmethod
    def eligible(decision: Decision) -> bool:
        policy = decision.request.policy
        return (
            policy.semantic_cache.adaptive.mode != "off"
            and policy.semantic_cache.enabled
            and decision.cacheable
            and decision.layer is Layer.MISS
            and decision.memory.tokens == 0
        )

    def _sampled(self, policy: Policy) -> bool:
        return self._rng.random() < policy.semantic_cache.adaptive.sample_rate

    def sample_repeat(self, policy: Policy) -> bool:
        """Whether a `no-cache` request's entry should be read for the judge's error
        estimate (the caller then starts the read; asked before any memory is
        injected)."""
        return policy.semantic_cache.adaptive.mode != "off" and self._sampled(policy)

    def schedule(self, decision: Decision, completion: dict[str, Any]) -> None:
        """After the response of a forwarded request: the shadow work, in a task."""
        if not self.eligible(decision):
            _drop(decision.prior_exact_read)
            return
        diagnostics = decision.diagnostics
        if (
            not diagnostics.adaptive_candidates
            and decision.prior_exact_read is None
            and diagnostics.adaptive_different is None
        ):
            return
        # Sampled before any work: the checks and the judge cost CPU (a few ms with
        # the local judge) that the next requests would otherwise wait for.
        if decision.prior_exact_read is None and not self._sampled(decision.request.policy):
            return
        if len(self._tasks) >= MAX_PENDING_TASKS:
            self.skipped_total += 1
            _drop(decision.prior_exact_read)
            return
        task = asyncio.create_task(self._work(decision, completion))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- the shadow work ---------------------------------------------------------------------

    async def _work(self, decision: Decision, completion: dict[str, Any]) -> None:
        try:
            fresh = stored_answer_text(completion) or ""
            if decision.prior_exact_read is not None:
                await self._judge_repeat(decision, fresh)
            best, different = await self._walk_candidates(decision)
            if best is not None:
                await self._verify(decision, completion, fresh, *best)
            if different is not None:
                await self._judge_different(decision, fresh, different)
        except Exception as exc:
            self.errors_total += 1
            self._failures.warning("shadow verification failed (%s)", type(exc).__name__)

    async def _verify(
        self,
        decision: Decision,
        completion: dict[str, Any],
        fresh: str,
        entry: SemanticEntry,
        similarity: float,
    ) -> None:
        """Would `entry`'s stored answer have served this miss? Counted per bucket."""
        request = decision.request
        language = decision.diagnostics.adaptive_language or ""
        scopes = scopes_of(request.tenant, language, request.model)
        policy = request.policy.semantic_cache.adaptive
        # One sampled miss stands for 1 / sample_rate of them: the traffic weights
        # stay an unbiased count of what serving from this bucket would serve.
        self._stats.add_traffic(scopes, similarity, 1.0 / policy.sample_rate)
        case = ShadowCase(
            query=decision.query_text or "",
            candidate=entry.query_text,
            stored_answer=stored_answer_text(entry.completion) or "",
            fresh_answer=fresh,
        )
        judged = await self._judge(request.tenant, policy, case)
        if judged is None:
            return
        judge, same = judged
        errors = self._stats.judge_errors(judge.name)
        if not errors.informative:
            return  # a judge whose "same" is as likely for a different pair says nothing
        corrected = errors.corrected(
            same, self._stats.prior_same(Scope(request.tenant), similarity)
        )
        self._stats.add_verdict(scopes, similarity, corrected)
        usage = completion.get("usage") or {}
        prompt = int(usage.get("prompt_tokens") or 0)
        answer = int(usage.get("completion_tokens") or 0)
        total = int(usage.get("total_tokens") or prompt + answer)
        self._stats.add_tally(scopes, "shadow_judged", 1.0)
        self._stats.add_tally(scopes, "shadow_accepted", corrected)
        self._stats.add_tally(scopes, "left_tokens", corrected * total)
        self._stats.add_tally(
            scopes, "left_cost_usd", corrected * self._cost(request.model, prompt, answer)
        )

    async def _walk_candidates(
        self, decision: Decision
    ) -> tuple[tuple[SemanticEntry, float] | None, SemanticEntry | None]:
        """The best candidate below the serving threshold that passes every check, and
        the best one known to be different (refused for a hard mismatch; the request
        path's, above the threshold, when it found one)."""
        policy = decision.request.policy.semantic_cache
        floor = policy.adaptive.floor
        found = decision.diagnostics.adaptive_different
        different = found[0] if found is not None else None
        for entry, similarity in decision.diagnostics.adaptive_candidates:
            if similarity < floor:
                break  # sorted: the rest are lower still
            checked = await judge_candidate(
                decision.query_text or "",
                entry.query_text,
                similarity,
                policy,
                self._comparator,
                None,
                self._guard,
                examine_from=floor,
            )
            if checked.passed_checks:
                return (entry, similarity), different
            if different is None and is_known_different(checked.mismatch_kinds):
                different = entry
        return None, different

    async def _judge_different(self, decision: Decision, fresh: str, entry: SemanticEntry) -> None:
        """A pair known to be different, judged as a shadow verification would judge
        it: a "same" verdict is a false accept of this judge."""
        case = ShadowCase(
            query=decision.query_text or "",
            candidate=entry.query_text,
            stored_answer=stored_answer_text(entry.completion) or "",
            fresh_answer=fresh,
        )
        request = decision.request
        judged = await self._judge(request.tenant, request.policy.semantic_cache.adaptive, case)
        if judged is not None:
            judge, same = judged
            self._stats.record_judge_truth(judge.name, truly_same=False, says_same=same)

    async def _judge_repeat(self, decision: Decision, fresh: str) -> None:
        read = decision.prior_exact_read
        assert read is not None
        try:
            cached: CachedCompletion | None = await read
        except Exception:
            return  # a store failure was the request's business, not the estimate's
        if cached is None:
            return
        query = decision.query_text or ""
        case = ShadowCase(query, query, stored_answer_text(cached.completion) or "", fresh)
        request = decision.request
        judged = await self._judge(request.tenant, request.policy.semantic_cache.adaptive, case)
        if judged is not None:
            judge, same = judged
            self._stats.record_judge_truth(judge.name, truly_same=True, says_same=same)

    def judge_for(self, policy: AdaptivePolicy) -> ShadowJudge:
        if policy.judge == "model" and policy.judge_model is not None:
            judge = self._model_judges.get(policy.judge_model)
            if judge is None:
                judge = self._model_judges[policy.judge_model] = ModelJudge(
                    self._provider, policy.judge_model
                )
            return judge
        return LocalAgreementJudge(self._comparator, self._embedder, policy.agreement_min_cosine)

    async def _judge(
        self, tenant: str, policy: AdaptivePolicy, case: ShadowCase
    ) -> tuple[ShadowJudge, bool] | None:
        """A verdict within the budget, its calls and cost counted; None if skipped."""
        judge = self.judge_for(policy)
        if self._judging.get(tenant, 0) >= policy.max_judges_in_flight:
            self.skipped_total += 1
            return None
        if not self._tokens.allows(
            tenant, judge.estimated_tokens(case), policy.judge_tokens_per_minute
        ):
            self.skipped_total += 1
            return None
        self._judging[tenant] = self._judging.get(tenant, 0) + 1
        try:
            async with asyncio.timeout(policy.judge_timeout_seconds):
                verdict = await judge.judge(case)
        except Exception as exc:
            self.errors_total += 1
            self._failures.warning("shadow judge failed (%s); not counted", type(exc).__name__)
            return None
        finally:
            self._judging[tenant] -= 1
        self._tokens.spend(tenant, verdict.tokens)
        tenant_scope = (Scope(tenant),)
        self._stats.add_tally(tenant_scope, "judge_calls", 1.0)
        if verdict.tokens:
            model = judge.model if isinstance(judge, ModelJudge) else ""
            self._stats.add_tally(tenant_scope, "judge_tokens", float(verdict.tokens))
            self._stats.add_tally(
                tenant_scope,
                "judge_cost_usd",
                self._cost(model, verdict.prompt_tokens, verdict.completion_tokens),
            )
        return judge, verdict.same

    async def drain(self) -> None:
        """Wait for shadow work in flight (tests, orderly shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self.drain()


def _drop(read: asyncio.Future[Any] | None) -> None:
    if read is not None:
        read.cancel()
        read.add_done_callback(lambda f: None if f.cancelled() else f.exception())
