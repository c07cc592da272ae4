"""The decision: what the pipeline did with one request and why, built once by the
runner from the stages' values (`values.py`), and read by everything after it: the
response headers, the hit audit, the shadow check and the decision record."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.values import (
    NO_DIAGNOSTICS,
    NO_MEMORY,
    Hit,
    MemoryInjection,
    Miss,
    QueryEmbedding,
    SemanticDiagnostics,
    Timings,
    Verdict,
)
from gateway.providers.protocol import UpstreamReport
from gateway.spend.budget import BudgetStatus
from gateway.storage.protocols import CachedCompletion
from gateway.telemetry.records import DecisionRecord


@dataclass(frozen=True, slots=True)
class Served:
    """The stored answer a hit served: what it saved and how old it was."""

    tokens_saved: int
    usage: dict[str, Any]  # the entry's original usage (the cost saved)
    age_seconds: int

    @classmethod
    def of(cls, entry: CachedCompletion) -> Served:
        usage = entry.completion.get("usage") or {}
        return cls(
            tokens_saved=int(usage.get("total_tokens") or 0),
            usage=dict(usage),
            age_seconds=max(0, int(time.time() - entry.created_at)),
        )


@dataclass(frozen=True, slots=True)
class Decision:
    request: ChatRequest
    layer: Layer
    reason: Reason | None = None
    classifier_rule: str | None = None
    diagnostics: SemanticDiagnostics = NO_DIAGNOSTICS
    memory: MemoryInjection = NO_MEMORY
    served: Served | None = None
    coalesced: bool = False  # answered with a concurrent identical request's answer
    # what the provider call said besides the answer: the model that answered (a
    # fallback's name when one did) and its headers for the client
    upstream: UpstreamReport = field(default_factory=UpstreamReport)
    # a `no-cache` request's own entry, read for the shadow judge's error estimate
    prior_exact_read: asyncio.Future[CachedCompletion | None] | None = None
    query_embedding: QueryEmbedding | None = None  # the ask's, when a stage embedded it
    budget: BudgetStatus | None = None  # the tenant's budget, when one was checked

    @property
    def query_text(self) -> str | None:
        """The text embedded for this request (the ask), when one was."""
        return None if self.query_embedding is None else self.query_embedding.text

    @property
    def cacheable(self) -> bool:
        return self.layer is not Layer.BYPASS

    @property
    def answered_by(self) -> str:
        """The model that answered: a fallback's `model_name` when one did, else the
        requested model (also for cache hits: an entry is stored under the key of the
        model that produced it)."""
        return self.upstream.model or self.request.model

    @property
    def similarity(self) -> float | None:
        return self.diagnostics.similarity

    def record(
        self, status: int, stored: bool, timings: Timings, cost_saved_usd: float = 0.0
    ) -> DecisionRecord:
        """The decision record of this request, finished with `status`; `cost_saved_usd`:
        what a hit saved, priced by the recorder (`DecisionRecorder.saved_cost`)."""
        request = self.request
        memory = self.memory
        similarity = self.diagnostics.similarity
        prompt = request.key_text if request.policy.telemetry.record_prompts else None
        return DecisionRecord(
            request_id=request.request_id,
            at=time.time(),
            tenant=request.tenant,
            model=request.model,
            stream=request.stream,
            layer=self.layer.value,
            reason=self.reason.value if self.reason else None,
            status=status,
            stored=stored,
            coalesced=self.coalesced,
            similarity=None if similarity is None else round(similarity, 4),
            review_verdict=self.diagnostics.review_verdict,
            mismatch_kinds=self.diagnostics.mismatch_kinds,
            classifier_rule=self.classifier_rule,
            tokens_saved=0 if self.served is None else self.served.tokens_saved,
            cost_saved_usd=cost_saved_usd,
            memory_tokens=memory.tokens,
            memory_items=memory.items,
            memory_note=memory.note,
            total_ms=request.elapsed_ms(),
            cache_key=request.exact_key_if_computed,
            stages_ms=dict(timings.ms),
            turn=_turn_shape(request),
            prompt=prompt,
            cosine=None if self.diagnostics.cosine is None else round(self.diagnostics.cosine, 4),
            difference=self.diagnostics.difference,
        )


def _turn_shape(request: ChatRequest) -> dict[str, Any] | None:
    turn = request.turn_if_parsed
    if turn is None:
        return None
    return {
        "split": turn.rule,
        "material_blocks": len(turn.material),
        "attachments": len(turn.attachment_digests),
        "ask_chars": len(turn.ask),
    }


@dataclass(slots=True)
class DecisionBuilder:
    """The runner's note of the values the stages returned so far, for one request:
    the decision is what they add up to at any point (an error part-way is recorded
    with what was decided until then)."""

    request: ChatRequest
    timings: Timings = field(default_factory=Timings)
    layer: Layer = Layer.MISS
    reason: Reason | None = None
    classifier_rule: str | None = None
    diagnostics: SemanticDiagnostics = NO_DIAGNOSTICS
    entry_refused: bool = False
    memory: MemoryInjection = NO_MEMORY
    served: Served | None = None
    coalesced: bool = False
    embedding: QueryEmbedding | None = None
    upstream: UpstreamReport = field(default_factory=UpstreamReport)
    prior_exact_read: asyncio.Future[CachedCompletion | None] | None = None
    stored: bool = False
    budget: BudgetStatus | None = None

    @property
    def cacheable(self) -> bool:
        return self.layer is not Layer.BYPASS

    def classified(self, verdict: Verdict) -> None:
        if verdict.reason is not None:
            self.layer, self.reason = Layer.BYPASS, verdict.reason
            self.classifier_rule = verdict.rule

    def bypass(self, reason: Reason) -> None:
        self.layer, self.reason = Layer.BYPASS, reason

    def missed(self, miss: Miss) -> None:
        self.layer, self.reason = Layer.MISS, miss.reason
        self._diagnose(miss.diagnostics, miss.query_embedding)
        self.entry_refused = self.entry_refused or miss.entry_refused

    def hit(self, hit: Hit) -> None:
        self.layer, self.reason = hit.layer, None
        self._diagnose(hit.diagnostics, hit.query_embedding)
        self.served = Served.of(hit.entry)

    def _diagnose(self, diagnostics: SemanticDiagnostics, embedding: QueryEmbedding | None) -> None:
        if diagnostics is not NO_DIAGNOSTICS:
            self.diagnostics = diagnostics
        if embedding is not None:
            self.embedding = embedding

    def injected(self, memory: MemoryInjection) -> None:
        self.memory = memory
        if memory.query_embedding is not None:
            self.embedding = memory.query_embedding

    def shared(self, completion: dict[str, Any]) -> None:
        """Answered with the leader's answer of a concurrent identical request."""
        self.layer, self.reason, self.coalesced = Layer.EXACT, None, True
        entry = CachedCompletion(
            completion=completion,
            tenant=self.request.tenant,
            model=self.request.model,
            created_at=time.time(),
        )
        self.served = Served.of(entry)

    def decision(self) -> Decision:
        return Decision(
            request=self.request,
            layer=self.layer,
            reason=self.reason,
            classifier_rule=self.classifier_rule,
            diagnostics=self.diagnostics,
            memory=self.memory,
            served=self.served,
            coalesced=self.coalesced,
            upstream=self.upstream,
            prior_exact_read=self.prior_exact_read,
            query_embedding=self.embedding,
            budget=self.budget,
        )

    def record(self, status: int, cost_saved_usd: float = 0.0) -> DecisionRecord:
        return self.decision().record(status, self.stored, self.timings, cost_saved_usd)
