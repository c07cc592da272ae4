"""Memory stage, on every forwarded request (cache miss or bypass): retrieve the user's
memories and the tenant's knowledge (a request without a user gets the knowledge alone)
for the last user turn, merge them with the session's knowledge cache, read
the task the request names (`x-gateway-task`), and inject them as reference-data
messages within the token budget (`assemble.py`; with policy `working_memory` on, the
conversation is also fitted to the context window).

Runs before the cache lookups when the policy lets injected memory bypass the shared
cache (`memory.bypass_cache_when_injected`, the default: the lookups then run only
when nothing was injected, so they see the request as the client sent it), else after
them; a block of tenant knowledge alone names its items (`knowledge_digest.py`) so
that the request may stay cacheable under keys of its own. Fails open: if anything
here fails, the request is forwarded without memory.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gateway.errors import StoreUnavailableResponse
from gateway.knowledge.records import KNOWLEDGE_SOURCE
from gateway.knowledge.service import KnowledgeService
from gateway.memory.capture import extract_statements
from gateway.memory.inject import procedural_candidate
from gateway.memory.limits import ModelLimits
from gateway.memory.records import MemoryScope
from gateway.memory.retrieval import ScopeIndex, ScoredMemory
from gateway.memory.service import MemoryService, NewMemory
from gateway.memory.session import MemoryCandidate, this_turn
from gateway.memory.text import dedup_key
from gateway.memory.tokens import Tokenizers
from gateway.memory.tool_results import ToolResultShrinker
from gateway.pipeline.assemble import (
    Inputs,
    assemble_budgeted,
    assemble_plain,
    requested_output_tokens,
)
from gateway.pipeline.concurrently import both
from gateway.pipeline.knowledge_digest import for_sharing, shareable_digest
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.task_state import INJECTED, NO_ROOM, TaskFound, TaskLookup
from gateway.pipeline.tenant_knowledge import TenantKnowledge
from gateway.pipeline.values import MemoryInjection, QueryEmbedding, Timings
from gateway.policy.memory import MemoryPolicy
from gateway.providers.protocol import ChatProvider
from gateway.storage.agent_protocols import TaskStore
from gateway.storage.protocols import QuotaExceeded
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)


class MemoryStage:
    def __init__(
        self,
        service: MemoryService,
        tokenizers: Tokenizers,
        limits: ModelLimits,
        on_failure: Callable[[str, str], None] | None = None,
        tasks: TaskStore | None = None,
        summariser: ChatProvider | None = None,
        knowledge: KnowledgeService | None = None,
    ) -> None:
        self._service = service
        # The tenant's knowledge base, retrieved next to the user's memories.
        self._knowledge = TenantKnowledge(knowledge)
        self._tasks = TaskLookup(tasks)
        # Chat calls for `working_memory.summarise_model` (tool-result summaries).
        self._summariser = summariser
        self._on_failure = on_failure
        self._tokenizers = tokenizers
        self._limits = limits
        self._failures = ThrottledLogger(logger, interval_seconds=30.0)

    async def run(
        self,
        request: ChatRequest,
        timings: Timings,
        embedding: QueryEmbedding | None = None,
        may_share: bool = False,
    ) -> MemoryInjection:
        """What to inject for this request's user; `embedding`: the ask's, when the
        semantic stage made it already; `may_share`: the request is still cacheable
        (before the lookups), so that tenant knowledge alone keeps it so."""
        policy = request.policy.memory
        wants_memory = policy.enabled and bool(request.user)
        # Tenant knowledge applies to requests without a user too.
        wants_knowledge = policy.enabled and self._knowledge.wanted(request)
        if not (
            wants_memory or wants_knowledge or request.task or request.policy.working_memory.enabled
        ):
            return MemoryInjection(query_embedding=embedding)
        draft = _Draft(embedding)
        try:
            draft.task = await self._tasks.find(request)
            candidates: list[MemoryCandidate] = []
            index: ScopeIndex | None = None
            if wants_memory:
                assert request.user is not None
                scope = MemoryScope(request.tenant, request.user, request.namespace)
                candidates, index = await self._retrieve(request, timings, draft, policy, scope)
            elif wants_knowledge:
                candidates = await self._retrieve_knowledge(request, timings, draft, policy)
            # Procedural memories are never ranked: every current one goes first, in order.
            pinned: list[MemoryCandidate] = []
            if index is not None and policy.procedural_budget_tokens:
                pinned = [procedural_candidate(record) for record in index.procedural]
            knowledge_policy = request.policy.knowledge
            if may_share and knowledge_policy.cache_answers and not pinned and draft.task is None:
                candidates = for_sharing(candidates, knowledge_policy.cache_answers_top_n)
            with timings.timed("memory_inject"):
                injected = await self._inject(request, draft, candidates, pinned)
            if injected:
                # Counted after the response: ranking reads the counts through a scope
                # index that may be a minute old anyway.
                self._service.touch_later(request.tenant, injected)
            if wants_memory and policy.capture.enabled and request.key_text and index is not None:
                await self._capture(timings, draft, policy, scope, request.key_text, index)
        except StoreUnavailableResponse:
            raise
        except Exception as exc:
            if self._on_failure is not None:
                self._on_failure("memory", "retrieve")
            if request.policy.failure.memory == "closed":
                raise StoreUnavailableResponse(
                    "The memory store is unavailable and this policy fails closed."
                ) from exc
            self._failures.warning(
                "memory stage failed (%s); forwarding without memory", type(exc).__name__
            )
            draft.note = "memory_unavailable"
        return draft.injection()

    async def runs_before_lookup(self, request: ChatRequest) -> bool:
        """Whether this request's memory stage runs before the cache lookups: when the
        policy keeps injected answers out of the shared cache
        (`memory.bypass_cache_when_injected`) and something may be injected: the user's
        memories, or the tenant's knowledge (a request without a user gets it too: one
        version read tells whether the tenant has any, the scope's index is cached)."""
        policy = request.policy.memory
        if not (policy.enabled and policy.bypass_cache_when_injected):
            return False
        if request.user:
            return True
        if not self._knowledge.wanted(request):
            return False
        try:
            index = await self._knowledge.index(request)
        except Exception:
            # The stage itself then meets the failure and applies `failure.memory`.
            return True
        return index is not None and index.size > 0

    async def _retrieve_knowledge(
        self, request: ChatRequest, timings: Timings, draft: _Draft, policy: MemoryPolicy
    ) -> list[MemoryCandidate]:
        """A request without a user: the tenant's knowledge alone, best first (no
        session cache: that is kept per user)."""
        query = request.key_text
        with timings.timed("memory_retrieve"):
            index = await self._knowledge.index(request)
            if not query or index is None or not index.size:
                return []
            # A repeated question (an exact hit) needs neither the ranking nor the vector.
            knowledge = self._knowledge.memoised(request, query, index)
            if knowledge is None:
                vector = await self._query_vector(request, timings, draft, query, policy)
                knowledge = await self._knowledge.search(request, query, vector, index)
        return this_turn([], knowledge)[: policy.session.inject_top_n]

    async def _retrieve(
        self,
        request: ChatRequest,
        timings: Timings,
        draft: _Draft,
        policy: MemoryPolicy,
        scope: MemoryScope,
    ) -> tuple[list[MemoryCandidate], ScopeIndex]:
        """What retrieval and the session cache offer to inject, best first."""
        with timings.timed("memory_retrieve"):
            if request.session:
                # The session's cache is read while the scopes are read and searched.
                cached, (found, retrieved, knowledge) = await both(
                    self._service.load_session(scope, request.session),
                    self._search(request, timings, draft, scope),
                )
                turn = await self._service.session_turn(
                    scope,
                    request.session,
                    retrieved,
                    policy,
                    index=found.memories,
                    knowledge=knowledge,
                    knowledge_index=found.knowledge,
                    cached=cached,
                )
                candidates = turn.to_inject
            else:
                found, retrieved, knowledge = await self._search(request, timings, draft, scope)
                candidates = this_turn(retrieved, knowledge)[: policy.session.inject_top_n]
        return candidates, found.memories

    async def _search(
        self, request: ChatRequest, timings: Timings, draft: _Draft, scope: MemoryScope
    ) -> tuple[_Found, list[ScoredMemory], list[ScoredMemory]]:
        """The turn's scopes, and what each holds for its question."""
        index, knowledge_index = await self._scopes(request, scope)
        found = _Found(index, knowledge_index)
        knows = knowledge_index is not None and knowledge_index.size > 0
        if not request.key_text or not (index.size or knows):
            return found, [], []
        retrieved, knowledge = await self._search_both(request, timings, draft, found)
        return found, retrieved, knowledge

    async def _scopes(
        self, request: ChatRequest, scope: MemoryScope
    ) -> tuple[ScopeIndex, ScopeIndex | None]:
        """The user's prepared scope and the request's knowledge scope (None: off)."""
        if not self._knowledge.wanted(request):
            return await self._service.scope_index(scope), None
        # Both versions read at once: one store round trip's wait, not two.
        return await both(self._service.scope_index(scope), self._knowledge.index(request))

    async def _search_both(
        self, request: ChatRequest, timings: Timings, draft: _Draft, found: _Found
    ) -> tuple[list[ScoredMemory], list[ScoredMemory]]:
        """The user's memories and the tenant's knowledge for the turn's question; a
        repeated question (an exact hit) from the searches' memos, without the vector."""
        query, policy = request.key_text, request.policy.memory
        assert request.user is not None and query
        scope = MemoryScope(request.tenant, request.user, request.namespace)
        index, knowledge_index = found.memories, found.knowledge
        top_k = policy.retrieve_top_k
        recalled = self._service.memoised(scope, query, top_k, policy, index) if index.size else []
        knowledge = self._knowledge.memoised(request, query, knowledge_index)
        wants_knowledge = knowledge_index is not None and knowledge_index.size > 0
        vector = None
        if recalled is None or (wants_knowledge and knowledge is None):
            vector = await self._query_vector(request, timings, draft, query, policy)
        memories = functools.partial(
            self._service.search, scope, query, top_k, policy, query_vector=vector, index=index
        )
        tenants = functools.partial(self._knowledge.search, request, query, vector, knowledge_index)
        if recalled is None and knowledge is None and wants_knowledge:
            assert knowledge_index is not None
            # Both ranked at once, the larger scope first: ranked in a worker thread, it
            # leaves the loop free to rank the other meanwhile.
            if index.size >= knowledge_index.size:
                recalled, knowledge = await both(memories(), tenants())
            else:
                knowledge, recalled = await both(tenants(), memories())
        recalled = await memories() if recalled is None else recalled
        knowledge = await tenants() if knowledge is None else knowledge
        return recalled, knowledge

    async def _query_vector(
        self,
        request: ChatRequest,
        timings: Timings,
        draft: _Draft,
        query: str,
        policy: MemoryPolicy,
    ) -> Any:
        """The query's vector, embedded once per request: the semantic stage's when it
        embedded the same text, else embedded here and, when the text is the ask the
        semantic stage compares (a turn without material), handed on for it to reuse."""
        known = draft.embedding
        if known is not None and known.vector is not None:
            return known.vector if known.text == query else None
        # Timed on its own (within memory_retrieve): the embedder's share of the stage.
        with timings.timed("memory_embed"):
            vector = await self._service.embed_query(query, policy.embed_timeout_seconds)
        if vector is not None and request.turn.ask == query:
            draft.embedding = QueryEmbedding(query, vector)
        return vector

    async def _inject(
        self,
        request: ChatRequest,
        draft: _Draft,
        candidates: list[MemoryCandidate],
        pinned: list[MemoryCandidate],
    ) -> list[str]:
        """Places what fits; returns the ids of the memories injected."""
        found = draft.task
        inputs = Inputs(
            request=request,
            counter=self._tokenizers.for_model(self._limits.tokenizer_model(request.model)),
            window_tokens=self._limits.context_window(
                request.model, request.policy.memory.default_context_window_tokens
            ),
            requested_output_tokens=requested_output_tokens(request.body),
            candidates=candidates,
            task=None if found is None else found.record,
            pinned=pinned,
        )
        budget = request.policy.working_memory
        if budget.enabled:
            shrinker = ToolResultShrinker(
                inputs.counter,
                self._summariser,
                budget.summarise_model,
                budget.summarise_timeout_seconds,
                self._failures,
            )
            assembled = await assemble_budgeted(inputs, shrinker.shrink)
            draft.dropped = assembled.dropped_messages
            draft.truncated = assembled.truncated_tool_results
        else:
            assembled = assemble_plain(inputs)
        if found is not None and found.outcome == INJECTED and assembled.task_tokens == 0:
            draft.task = TaskFound(None, NO_ROOM)
        if candidates or pinned or assembled.note == "over_context_window":
            draft.note = assembled.note
        if assembled.changed:
            draft.body = {**request.body, "messages": assembled.messages}
        draft.tokens = assembled.task_tokens + assembled.memory_tokens
        draft.items = len(assembled.included)
        if request.policy.knowledge.cache_answers:
            draft.knowledge_digest = shareable_digest(assembled.included, assembled.task_tokens)
        # Knowledge items are shared by the tenant: their use is not counted per item.
        return [c.memory_id for c in assembled.included if c.source != KNOWLEDGE_SOURCE]

    async def _capture(
        self,
        timings: Timings,
        draft: _Draft,
        policy: MemoryPolicy,
        scope: MemoryScope,
        query: str,
        index: ScopeIndex,
    ) -> None:
        known = index.known_keys
        statements = [text for text in extract_statements(query) if dedup_key(text) not in known]
        if not statements:
            return
        # Captured text never refuses the request: flagged statements are quarantined
        # at most, whatever the policy says for the API.
        capture_policy = policy.model_copy(update={"write_guard": "quarantine"})
        items = [NewMemory(content=text, source=policy.capture.source) for text in statements]
        with timings.timed("memory_capture"):
            try:
                await self._service.add(scope, items, capture_policy)
            except QuotaExceeded:
                # The user is at a cap: capture stops storing, the turn goes on.
                draft.note = "memory_limit_reached"


@dataclass(frozen=True, slots=True)
class _Found:
    """The request's prepared scopes, read this turn."""

    memories: ScopeIndex
    knowledge: ScopeIndex | None


@dataclass(slots=True)
class _Draft:
    """The injection being worked out (one run's, local): what a failure part-way
    leaves stays, as the request is then forwarded with what was done."""

    embedding: QueryEmbedding | None
    body: dict[str, Any] | None = None
    tokens: int = 0
    items: int = 0
    note: str | None = None
    task: TaskFound | None = None
    dropped: int | None = None
    truncated: int = 0
    knowledge_digest: str | None = None

    def injection(self) -> MemoryInjection:
        return MemoryInjection(
            self.body,
            self.tokens,
            self.items,
            self.note,
            self.embedding,
            task_outcome=None if self.task is None else self.task.outcome,
            dropped_messages=self.dropped,
            truncated_tool_results=self.truncated,
            knowledge_digest=self.knowledge_digest,
        )
