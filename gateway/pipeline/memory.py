"""Memory stage, on every forwarded request (cache miss or bypass): retrieve the user's
memories for the last user turn, merge them with the session's knowledge cache, and
inject the best of them as one reference-data message within the token budget.

Runs before the cache lookups when the policy lets injected memory bypass the shared
cache (`memory.bypass_cache_when_injected`, the default: the lookups then run only
when nothing was injected, so they see the request as the client sent it), else after
them. Fails open: if anything here fails, the request is forwarded without memory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from gateway.cache.keys import last_user_text
from gateway.errors import StoreUnavailableError
from gateway.memory.capture import extract_statements
from gateway.memory.inject import build_block, insert_after_system_prompt
from gateway.memory.limits import ModelLimits
from gateway.memory.records import MemoryScope
from gateway.memory.retrieval import ScopeIndex, ScoredMemory
from gateway.memory.service import MemoryService, NewMemory
from gateway.memory.session import MemoryCandidate, from_retrieval
from gateway.memory.text import dedup_key
from gateway.memory.tokens import Tokenizers
from gateway.pipeline.context import ChatContext
from gateway.policy.models import MemoryPolicy
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
    ) -> None:
        self._service = service
        self._on_failure = on_failure
        self._tokenizers = tokenizers
        self._limits = limits
        self._failures = ThrottledLogger(logger, interval_seconds=30.0)

    async def run(self, ctx: ChatContext) -> None:
        policy = ctx.policy.memory
        if not policy.enabled or not ctx.user:
            return
        try:
            await self._run(ctx, policy, MemoryScope(ctx.tenant, ctx.user, ctx.namespace))
        except Exception as exc:
            if self._on_failure is not None:
                self._on_failure("memory", "retrieve")
            if ctx.policy.failure.memory == "closed":
                raise StoreUnavailableError(
                    "The memory store is unavailable and this policy fails closed."
                ) from exc
            self._failures.warning(
                "memory stage failed (%s); forwarding without memory", type(exc).__name__
            )
            ctx.memory_note = "memory_unavailable"

    async def _run(self, ctx: ChatContext, policy: MemoryPolicy, scope: MemoryScope) -> None:
        messages: list[dict[str, Any]] = list(ctx.body.get("messages") or [])
        query = last_user_text(messages)
        with ctx.timed("memory_retrieve"):
            index = await self._service.scope_index(scope)
            retrieved: list[ScoredMemory] = []
            if index.size and query:
                vector = await self._query_vector(ctx, query, policy)
                retrieved = await self._service.search(
                    scope,
                    query,
                    policy.retrieve_top_k,
                    policy,
                    query_vector=vector,
                    index=index,
                )
            if ctx.session:
                turn = await self._service.session_turn(
                    scope, ctx.session, retrieved, policy, index=index
                )
                candidates = turn.to_inject
            else:
                candidates = [from_retrieval(s) for s in retrieved][: policy.session.inject_top_n]
        if candidates:
            injected = self._inject(ctx, policy, messages, candidates)
            if injected:
                await self._service.touch(ctx.tenant, injected)
        if policy.capture.enabled and query:
            await self._capture(ctx, policy, scope, messages, index)

    async def _query_vector(self, ctx: ChatContext, query: str, policy: MemoryPolicy) -> Any:
        """The query's vector, embedded once per request: the semantic stage's when it
        embedded the same text, else embedded here and, when the text is the ask the
        semantic stage compares (a turn without material), left for it to reuse."""
        if ctx.query_vector is not None:
            return ctx.query_vector if ctx.query_text == query else None
        vector = await self._service.embed_query(query, policy.embed_timeout_seconds)
        if vector is not None and ctx.parsed_turn().ask == query:
            ctx.query_text, ctx.query_vector = query, vector
        return vector

    def _inject(
        self,
        ctx: ChatContext,
        policy: MemoryPolicy,
        messages: list[dict[str, Any]],
        candidates: list[MemoryCandidate],
    ) -> list[str]:
        """Injects what fits; returns the ids of the memories injected."""
        with ctx.timed("memory_inject"):
            counter = self._tokenizers.for_model(self._limits.tokenizer_model(ctx.model))
            window = self._limits.context_window(ctx.model, policy.default_context_window_tokens)
            reserve = _requested_output_tokens(ctx.body) or policy.reserve_output_tokens
            room = window - counter.count_messages(messages) - reserve
            budget = min(policy.max_memory_tokens, room)
            if budget <= 0:
                ctx.memory_note = "no_room_in_context"
                return []
            block = build_block(candidates, counter, budget)
            if block.message is None:
                ctx.memory_note = "nothing_fits_budget"
                return []
            ctx.body = {**ctx.body, "messages": insert_after_system_prompt(messages, block.message)}
            ctx.memory_tokens = block.tokens
            ctx.memory_items = len(block.included)
            return [candidate.memory_id for candidate in block.included]

    async def _capture(
        self,
        ctx: ChatContext,
        policy: MemoryPolicy,
        scope: MemoryScope,
        messages: list[dict[str, Any]],
        index: ScopeIndex,
    ) -> None:
        known = index.known_keys
        statements = [
            text
            for text in extract_statements(last_user_text(messages))
            if dedup_key(text) not in known
        ]
        if not statements:
            return
        # Captured text never refuses the request: flagged statements are quarantined
        # at most, whatever the policy says for the API.
        capture_policy = policy.model_copy(update={"write_guard": "quarantine"})
        items = [NewMemory(content=text, source=policy.capture.source) for text in statements]
        with ctx.timed("memory_capture"):
            try:
                await self._service.add(scope, items, capture_policy)
            except QuotaExceeded:
                # The user is at a cap: capture stops storing, the turn goes on.
                ctx.memory_note = "memory_limit_reached"


def _requested_output_tokens(body: dict[str, Any]) -> int | None:
    for name in ("max_completion_tokens", "max_tokens"):
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
