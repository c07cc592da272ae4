"""Production false-hit audit: a policy-set fraction of served cache hits is also sent
upstream, in the background after the hit was answered, and the fresh answer compared
with the one served (`exact`: same text once normalised; `reviewer`: the configured
reviewer judges whether the two say the same). The share of disagreements estimates the
false-hit rate per tenant and layer, with a 95 % Wilson interval.

`exact` over-counts wherever the model does not answer deterministically (temperature,
sampling): use it with temperature 0, or use `reviewer`. Audit calls are never cached,
never counted as requests, and bounded in number (`max_in_flight`; more are skipped).
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import orjson

from gateway.pipeline.decision import Decision
from gateway.pipeline.reasons import Layer
from gateway.providers.protocol import Provider
from gateway.review.protocol import Reviewer
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

_Z95 = 1.959964
_AUDIT_TIMEOUT_SECONDS = 120.0


def wilson_interval(failures: int, samples: int) -> tuple[float, float]:
    if samples == 0:
        return (0.0, 1.0)
    p = failures / samples
    denominator = 1 + _Z95**2 / samples
    centre = (p + _Z95**2 / (2 * samples)) / denominator
    margin = _Z95 * math.sqrt(p * (1 - p) / samples + _Z95**2 / (4 * samples**2)) / denominator
    return (max(0.0, centre - margin), min(1.0, centre + margin))


def answer_text(completion: dict[str, Any]) -> str:
    """The first choice's content and tool calls, whitespace-normalised."""
    choices = completion.get("choices") or [{}]
    message = choices[0].get("message") or {}
    content = " ".join(str(message.get("content") or "").split())
    calls = message.get("tool_calls")
    if calls:
        content += orjson.dumps(
            [call.get("function") for call in calls], option=orjson.OPT_SORT_KEYS
        ).decode()
    return content


# (tenant, language of the ask, model, calibrated similarity, agrees): a verdict on a
# served semantic hit, for the adaptive statistics.
SemanticVerdictHook = Callable[[str, str, str, float, bool], None]


class HitAuditor:
    def __init__(
        self,
        provider: Provider,
        reviewer: Reviewer | None,
        rng: random.Random | None = None,
        on_semantic_verdict: SemanticVerdictHook | None = None,
    ) -> None:
        self._on_semantic_verdict = on_semantic_verdict
        self._provider = provider
        self._reviewer = reviewer
        self._rng = rng or random.Random()
        self._tasks: set[asyncio.Task[None]] = set()
        self._sampled: Counter[tuple[str, str]] = Counter()
        self._false: Counter[tuple[str, str]] = Counter()
        self.errors = 0
        self.skipped = 0
        self._failures = ThrottledLogger(logger, interval_seconds=60.0)

    def maybe_audit(self, decision: Decision, served: dict[str, Any]) -> bool:
        """Schedule an audit of this served hit if the policy samples it."""
        request = decision.request
        policy = request.policy.audit
        if decision.layer not in (Layer.EXACT, Layer.SEMANTIC) or policy.sample_rate <= 0:
            return False
        if self._rng.random() >= policy.sample_rate:
            return False
        if len(self._tasks) >= policy.max_in_flight:
            self.skipped += 1
            return False
        body = {**request.body, "stream": False}
        body.pop("stream_options", None)
        bucket: tuple[str, str, float] | None = None
        similarity = decision.similarity
        if decision.layer is Layer.SEMANTIC and similarity is not None:
            bucket = (decision.diagnostics.adaptive_language or "", request.model, similarity)
        task = asyncio.create_task(
            self._audit(
                request.tenant,
                decision.layer.value,
                body,
                answer_text(served),
                policy.compare,
                bucket,
                # A reviewer comparing the answers spends the tenant's review budget.
                request.policy.semantic_cache.review.tokens_per_tenant_per_hour,
            )
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _audit(
        self,
        tenant: str,
        layer: str,
        body: dict[str, Any],
        served: str,
        compare: str,
        bucket: tuple[str, str, float] | None = None,
        review_budget_tokens: int | None = None,
    ) -> None:
        try:
            async with asyncio.timeout(_AUDIT_TIMEOUT_SECONDS):
                fresh = answer_text(await self._provider.complete(body))
                if compare == "reviewer" and self._reviewer is not None:
                    verdict = await self._reviewer.review(
                        served, fresh, 1.0, tenant=tenant, budget_tokens=review_budget_tokens
                    )
                    agrees = verdict.same_meaning
                else:
                    agrees = served == fresh
        except Exception as exc:
            self.errors += 1
            self._failures.warning("hit audit failed (%s); not counted", type(exc).__name__)
            return
        self._sampled[(tenant, layer)] += 1
        if not agrees:
            self._false[(tenant, layer)] += 1
        if bucket is not None and self._on_semantic_verdict is not None:
            language, model, similarity = bucket
            self._on_semantic_verdict(tenant, language, model, similarity, agrees)

    def estimates(self) -> list[dict[str, Any]]:
        rows = []
        for (tenant, layer), sampled in sorted(self._sampled.items()):
            false_hits = self._false[(tenant, layer)]
            low, high = wilson_interval(false_hits, sampled)
            rows.append(
                {
                    "tenant": tenant,
                    "layer": layer,
                    "sampled": sampled,
                    "false_hits": false_hits,
                    "rate": round(false_hits / sampled, 4),
                    "ci95": [round(low, 4), round(high, 4)],
                }
            )
        return rows

    async def drain(self) -> None:
        """Wait for audits in flight (tests, orderly shutdown)."""
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self.drain()
