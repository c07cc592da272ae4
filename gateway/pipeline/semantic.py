"""Stages 3 and 6 for the L2 semantic cache.

Lookup: split the last user turn into its ask, its material and its attachments
(`gateway/turn/`), embed the ask, take the top-k stored requests with the same
compatibility fingerprint (which holds the material and the attachments' digests, so
those must match exactly), and walk them best first:

- calibrated similarity below `review_min_similarity`  -> stop: `below_threshold`
  (the calibrated scale is the precision of serving from there, per language of the ask)
- entities disagree (numbers, IDs, dates, negation, names, tiers...), or a content word
  was added or swapped (`strict_band_terms`) -> `entity_mismatch` (checked on EVERY
  candidate: most near misses score above any threshold)
- similarity >= `accept_threshold` (= target_precision) -> hit, unless the structure
  guard sees a word-order or role swap                  -> `review_rejected`
- in a review band (none by default)                    -> the reviewer decides, within
  a timeout; no verdict in time or an error             -> `review_unavailable`

The reason reported for a miss is the one of the best candidate that got furthest.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from gateway.adaptive.known_different import is_known_different
from gateway.adaptive.serving import AdaptiveServing
from gateway.embed.memo import EmbeddingMemo
from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.nlp import detect_language
from gateway.pipeline.cache_controls import entry_ttl_seconds
from gateway.pipeline.judge import (
    StructureGuard,
    examination_floor,
    judge_candidate,
    stored_answer_text,
)
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.semantic_walk import SemanticWalk
from gateway.pipeline.serve_check import why_not_servable
from gateway.pipeline.values import (
    Hit,
    Lookup,
    Miss,
    QueryEmbedding,
    SemanticDiagnostics,
    Timings,
)
from gateway.review.protocol import MODEL, Reviewer
from gateway.storage.protocols import CachedCompletion, SemanticEntry, VectorIndex
from gateway.telemetry.throttled_log import ThrottledLogger
from gateway.turn import ask_length

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SemanticHit:
    entry: SemanticEntry
    similarity: float


class SemanticCacheStage:
    def __init__(
        self,
        embedder: Embedder,
        index: VectorIndex,
        comparator: EntityComparator,
        reviewer: Reviewer | None,
        guard: StructureGuard | None = None,
        adaptive: AdaptiveServing | None = None,
        memo: EmbeddingMemo | None = None,
    ) -> None:
        self._guard = guard
        # Asks embedded recently, per tenant (gateway/embed/memo.py): a repeated
        # paraphrase is a semantic hit every time and would be embedded every time.
        self._memo = memo if memo is not None else EmbeddingMemo()
        self._adaptive = adaptive
        self._embedder = embedder
        self._index = index
        self._comparator = comparator
        self._reviewer = reviewer
        self._failures = ThrottledLogger(logger, interval_seconds=30.0)

    @staticmethod
    def _not_comparable(request: ChatRequest) -> Reason | None:
        """Why this request cannot be matched by meaning at all (None: it can)."""
        turn = request.turn
        if turn.index is None:
            return Reason.NO_CANDIDATE
        if not turn.ask:
            if turn.material or turn.attachment_digests:
                return Reason.MATERIAL_ONLY
            return Reason.NO_CANDIDATE
        if ask_length(turn.ask) > request.policy.semantic_cache.max_query_chars:
            return Reason.QUERY_TOO_LONG if turn.material else Reason.LONG_PROMPT
        return None

    async def _embed(self, request: ChatRequest, known: QueryEmbedding | None) -> QueryEmbedding:
        """The ask's embedding (a comparable request has one): `known` when it is of
        the ask, else embedded now."""
        ask = request.turn.ask
        if known is not None and known.text == ask:
            return known
        memoised = self._memo.get(request.tenant, ask)
        if memoised is not None:
            return QueryEmbedding(ask, memoised)
        timeout = request.policy.semantic_cache.embed_timeout_seconds
        vectors = await asyncio.wait_for(self._embedder.embed([ask]), timeout)
        self._memo.put(request.tenant, ask, vectors[0])
        return QueryEmbedding(ask, vectors[0])

    async def lookup(
        self,
        request: ChatRequest,
        timings: Timings,
        embedding: QueryEmbedding | None = None,
    ) -> Lookup:
        """A stored answer for a request that means the same, or why there is none.
        `embedding`: the ask's, when the memory stage made it already."""
        policy = request.policy.semantic_cache
        fingerprint = request.fingerprint
        not_comparable = self._not_comparable(request)
        if not_comparable is not None:
            return Miss(not_comparable)
        try:
            with timings.timed("embed"):
                embedding = await self._embed(request, embedding)
        except Exception as exc:  # includes the timeout
            self._failures.warning(
                "embedder failed (%s); semantic lookup skipped", type(exc).__name__
            )
            return Miss(Reason.EMBEDDER_UNAVAILABLE)
        with timings.timed("semantic_search"):
            candidates = await self._index.search(fingerprint, embedding.vector, policy.top_k)
        if not candidates:
            return Miss(Reason.NO_CANDIDATE, query_embedding=embedding)
        with timings.timed("semantic_judge"):
            judged = await self._judge(request, timings, candidates)
        if isinstance(judged, Miss):
            return dataclasses.replace(judged, query_embedding=embedding)
        hit, diagnostics = judged
        layer = Layer.SEMANTIC
        if hit.entry.entry_id == request.exact_key_if_computed:
            # The entry of this very request (entries are stored under their exact
            # key), stored after this request's exact read missed: an exact hit.
            layer = Layer.EXACT
        else:
            diagnostics = dataclasses.replace(diagnostics, similarity=hit.similarity)
        self._index.touch(hit.entry.entry_id)
        entry = CachedCompletion(
            completion=hit.entry.completion,
            tenant=hit.entry.tenant,
            model=hit.entry.model,
            created_at=hit.entry.created_at,
        )
        return Hit(entry, layer, diagnostics, query_embedding=embedding)

    async def _judge(
        self,
        request: ChatRequest,
        timings: Timings,
        candidates: list[tuple[SemanticEntry, float]],
    ) -> tuple[SemanticHit, SemanticDiagnostics] | Miss:
        """Walks the candidates best first (see the module docstring)."""
        policy = request.policy.semantic_cache
        ask = request.turn.ask
        language = detect_language(ask)  # the ask's: its cosine scale
        adaptive = self._adaptive if policy.adaptive.mode != "off" else None
        accept: float | None = None
        if adaptive is not None:
            accept = adaptive.serving_threshold(request.tenant, language, request.model, policy)
        walk = SemanticWalk(adaptive_language=language if adaptive is not None else None)
        context = "\n".join(request.turn.material)
        floor = examination_floor(policy, self._reviewer)
        for position, (entry, cosine) in enumerate(candidates):
            similarity = self._embedder.calibrate(cosine, language)
            decision = await judge_candidate(
                ask,
                entry.query_text,
                similarity,
                policy,
                self._comparator,
                self._reviewer,
                self._guard,
                stored_answer=(
                    stored_answer_text(entry.completion)
                    if policy.review.show_stored_answer
                    and self._reviewer is not None
                    and self._reviewer.kind == MODEL
                    else None
                ),
                accept_threshold=accept,
                context=context,
                tenant=request.tenant,
            )
            if decision.review_verdict is not None:
                walk.review_verdict = decision.review_verdict
                timings.ms["review"] = decision.review_ms
            if decision.error is not None:
                self._failures.warning("reviewer failed (%s); candidate rejected", decision.error)
            if decision.accepted:
                # A match that cannot give this request all it asks for is passed over.
                refusal = why_not_servable(request, entry.completion, entry.created_at)
                if refusal is None:
                    if adaptive is not None:
                        adaptive.served(request.tenant, language, request.model, similarity, policy)
                    walk.difference = decision.difference
                    walk.cosine = float(cosine)
                    return SemanticHit(entry, similarity), walk.diagnostics()
                walk.entry_refused = True
                if walk.reason is None:
                    walk.reason, walk.similarity = refusal, similarity
                continue
            walk.mismatch_kinds += decision.mismatch_kinds
            if (
                adaptive is not None
                and walk.adaptive_different is None
                and similarity >= policy.adaptive.floor
                and is_known_different(decision.mismatch_kinds)
            ):
                # A pair known to be different: the judge's false-accept rate (shadow).
                walk.adaptive_different = (entry, similarity)
            if decision.reason is Reason.BELOW_THRESHOLD:
                if walk.reason is None:
                    walk.similarity = similarity
                if (
                    adaptive is not None
                    and not walk.adaptive_candidates
                    and similarity >= policy.adaptive.floor
                ):
                    # Checked after the response (the shadow), not on this path.
                    walk.adaptive_candidates = tuple(
                        (later, self._embedder.calibrate(later_cosine, language))
                        for later, later_cosine in candidates[position:]
                    )
                if similarity < floor:
                    break  # candidates are sorted: the rest are lower still
                continue  # a lower one may differ only in rewording (served to the floor)
            if walk.reason is None:
                walk.reason, walk.similarity = decision.reason, similarity
        return Miss(
            walk.reason or Reason.BELOW_THRESHOLD,
            walk.diagnostics(),
            entry_refused=walk.entry_refused,
        )

    async def store(
        self,
        request: ChatRequest,
        completion: dict[str, Any],
        embedding: QueryEmbedding | None = None,
    ) -> None:
        """Stores the answer under the ask's embedding (`embedding` when it is the
        ask's, else embedded now)."""
        fingerprint = request.fingerprint
        if self._not_comparable(request) is not None:
            return
        embedded = await self._embed(request, embedding)
        now = time.time()
        entry = SemanticEntry(
            # The exact key: re-storing the same request replaces its entry, and a
            # purge by key reaches both layers.
            entry_id=request.exact_key_if_computed or uuid.uuid4().hex,
            tenant=request.tenant,
            model=request.model,
            fingerprint=fingerprint,
            query_text=request.turn.ask,
            completion=completion,
            created_at=now,
            expires_at=now + entry_ttl_seconds(request, request.policy.semantic_cache.ttl_seconds),
            policy_version=request.policy.version,
            namespace=request.cache_namespace(),
        )
        await self._index.add(entry, embedded.vector)

    def report_failure(self, operation: str, exc: BaseException) -> None:
        self._failures.warning(
            "semantic cache %s failed (%s); serving from the provider",
            operation,
            type(exc).__name__,
        )
