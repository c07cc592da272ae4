"""Runs a chat request through the stages and returns what to send back.

    classify -> [memory] -> exact lookup -> semantic lookup -> memory -> forward -> store

Each stage returns a value (`values.py`); the runner notes them in one
`DecisionBuilder` and hands the `Decision` on with the answer. Memory runs once:
before the lookups for a request with a user or of a tenant with knowledge (policy
`memory.bypass_cache_when_injected`, the default), where an injected block makes it skip
the shared cache (`memory_personalized`), unless the block holds tenant knowledge only:
the request then stays cacheable under keys that name the injected items (policy
`knowledge.cache_answers`, `knowledge_digest.py`); otherwise after them, on a miss.

A cache hit ends the run early. Forwarding, the store and everything after the response
are in `after_send.py`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from gateway.adaptive.shadow import ShadowVerifier
from gateway.errors import GatewayError
from gateway.pipeline.admission import Admission
from gateway.pipeline.after_send import (
    AfterSend,
    CompletionOutcome,
    Outcome,
    PolicyResolver,
    StreamOutcome,
)
from gateway.pipeline.audit import HitAuditor
from gateway.pipeline.classify import ClassifyStage
from gateway.pipeline.decision import DecisionBuilder
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.layers import CacheLayers, ExactRead, StoreFailureHook
from gateway.pipeline.memory import MemoryStage
from gateway.pipeline.namespaces import NamespaceLimiter
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.semantic import SemanticCacheStage
from gateway.pipeline.serve_check import why_not_servable
from gateway.pipeline.single_flight import Flight, Recheck, SingleFlight
from gateway.pipeline.values import CACHEABLE, Hit, Miss
from gateway.providers.protocol import Provider
from gateway.spend.tracker import SpendTracker
from gateway.storage.protocols import CachedCompletion
from gateway.telemetry.recorder import DecisionRecorder

__all__ = [
    "ChatPipeline",
    "CompletionOutcome",
    "Outcome",
    "PolicyResolver",
    "StoreFailureHook",
    "StreamOutcome",
]


class ChatPipeline:
    def __init__(
        self,
        provider: Provider,
        exact: ExactCacheStage,
        semantic: SemanticCacheStage | None = None,
        classify: ClassifyStage | None = None,
        memory: MemoryStage | None = None,
        on_store_failure: StoreFailureHook | None = None,
        single_flight: SingleFlight | None = None,
        policy_for: PolicyResolver | None = None,
        namespaces: NamespaceLimiter | None = None,
        shadow: ShadowVerifier | None = None,
        auditor: HitAuditor | None = None,
        recorder: DecisionRecorder | None = None,
        spend: SpendTracker | None = None,
    ) -> None:
        self._shadow = shadow
        self._namespaces = namespaces
        self._flights = single_flight
        self._layers = CacheLayers(exact, semantic, on_store_failure)
        self._classify = classify or ClassifyStage(None)
        self._memory = memory
        self._after = AfterSend(
            provider, self._layers, single_flight, policy_for, shadow, auditor, recorder, spend
        )

    async def handle(self, request: ChatRequest, admission: Admission | None = None) -> Outcome:
        """The answer to `request`. A failure is recorded with its status (500 for one
        that is not a `GatewayError`) and raised on to the route. `admission`: the
        route's rate limits, awaited once the exact read is under way and before the
        provider is called (`admission.py`)."""
        builder = DecisionBuilder(request)
        try:
            return await self._run(builder, admission)
        except GatewayError as exc:
            self._after.record(builder, exc.status_code)
            raise
        except Exception:
            self._after.record(builder, 500)
            raise

    async def known_exact_read(self, request: ChatRequest) -> CachedCompletion | None:
        """The exact read of a request already known cacheable (the exact-hit shortcut,
        `gateway/api/hit_shortcut.py`: the same bytes, caller and policy were classified
        and keyed before). None sends the request down the full path, which handles it
        as it would any other: no entry, a failed read (counted and failed open or
        closed there), or memory that runs before the lookups (a user, tenant
        knowledge)."""
        # Both reads at once (on Redis, two round trips overlapping; the knowledge
        # version is the one every request of a tenant with knowledge enabled makes).
        memory_first = asyncio.ensure_future(self._memory_before_lookup(request))
        try:
            cached = await self._layers.exact.lookup(request)
        except Exception:
            cached = None
        if await memory_first:
            return None
        return cached

    def serve_known_exact(
        self, request: ChatRequest, cached: CachedCompletion
    ) -> CompletionOutcome | None:
        """`cached` as the exact hit of a request known cacheable: the decision, record,
        audit sampling and spend of the full path's exact hit; None when the entry may
        not serve it (the full path then says why)."""
        if why_not_servable(request, cached.completion, cached.created_at) is not None:
            return None
        builder = DecisionBuilder(request)
        builder.classified(CACHEABLE)
        builder.hit(Hit(cached, Layer.EXACT))
        return self._after.serve(builder, cached.completion)

    async def store_answer(self, request: ChatRequest, completion: dict[str, Any]) -> bool:
        """Stage 6 alone, for an answer obtained elsewhere (`gateway cache import`):
        the same rules, keys and TTLs as for a forwarded answer; whether any layer
        took it."""
        return await self._after.store(DecisionBuilder(request), completion)

    async def _run(self, builder: DecisionBuilder, admission: Admission | None) -> Outcome:
        request, timings = builder.request, builder.timings
        # Before the exact read starts: the single flight then knows whether an answer
        # stored later may have been missed by it.
        stores_mark = None if self._flights is None else self._flights.mark()
        # The exact-cache read (a round trip to the store's thread or to Redis) starts
        # before classification and runs while it does; its answer is used only if
        # the request turns out cacheable.
        exact_read = self._layers.start_exact_read(request)
        # Whether memory runs before the lookups (a knowledge version read for a tenant
        # with knowledge): asked alongside the exact read, used only if cacheable.
        memory_first = self._start_memory_check(request)
        try:
            if exact_read is not None:
                await _let_start(exact_read)
            # Classification runs while the rate-limit check's round trip (on Redis)
            # is out; a refused request costs it, never an embedding or a lookup.
            await self._classified(builder)
            if admission is not None:
                with timings.timed("rate_limit"):
                    await admission.admitted()
        except BaseException:
            _abandon(exact_read)
            _abandon(memory_first)
            raise
        memory_done = False
        if not builder.cacheable:
            _abandon(memory_first)
        elif memory_first is not None and await memory_first:
            memory_done = True
            await self._inject_memory(builder, may_share=True)
            if builder.memory.tokens > 0:
                exact_read = self._keyed_by_knowledge(builder, exact_read)
                request = builder.request
        if builder.cacheable:
            hit = await self._lookup(builder, exact_read)
            if hit is not None:
                return self._after.serve(builder, hit.entry.completion)
        else:
            _abandon(exact_read)
        if not memory_done:
            await self._inject_memory(builder)
        flight: Flight | None = None
        if self._flights is not None and self._coalescible(builder):
            with timings.timed("single_flight"):
                joined = await self._flights.join(
                    request.exact_key,
                    request.policy.single_flight.wait_seconds,
                    recheck=self._recheck(request),
                    since=stores_mark,
                )
            if joined.shared is not None:
                builder.shared(joined.shared)
                return self._after.serve(builder, joined.shared)
            flight = joined.flight
        return await self._after.forward(builder, flight, admission)

    async def _lookup(self, builder: DecisionBuilder, exact_read: ExactRead | None) -> Hit | None:
        request = builder.request
        if request.cache_control.no_cache:
            builder.missed(Miss(Reason.CLIENT_NO_CACHE))
            if (
                self._shadow is not None
                and request.policy.exact_cache.enabled
                and self._shadow.sample_repeat(request.policy)
            ):
                # The entry this request skips, read alongside the forward: a judge
                # shown it and the fresh answer sees a pair known to be the same.
                builder.prior_exact_read = self._layers.read_again(request)
            return None
        found = await self._layers.lookup(request, exact_read, builder.timings, builder.embedding)
        if isinstance(found, Hit):
            builder.hit(found)
            return found
        if found is not None:
            builder.missed(found)
        return None

    async def _classified(self, builder: DecisionBuilder) -> None:
        """Stage 1: the classifier's verdict, and the bypasses that apply before any
        lookup (a namespace over its limit, a request naming a task)."""
        request = builder.request
        with builder.timings.timed("classify"):
            await request.prepare_turn()
            builder.classified(self._classify.run(request))
            if (
                builder.cacheable
                and self._namespaces is not None
                and not self._namespaces.admit(request.tenant, request.namespace)
            ):
                builder.bypass(Reason.NAMESPACE_LIMIT)
            if builder.cacheable and request.task is not None:
                # Answered with the task's state, which the shared cache never saw.
                builder.bypass(Reason.TASK_STATE)

    def _start_memory_check(self, request: ChatRequest) -> asyncio.Future[bool] | None:
        if self._memory is None:
            return None
        return asyncio.ensure_future(self._memory.runs_before_lookup(request))

    async def _memory_before_lookup(self, request: ChatRequest) -> bool:
        """Memory first when it may personalise the answer: the shared cache is then
        used only if nothing of this user's was injected, or only tenant knowledge."""
        return self._memory is not None and await self._memory.runs_before_lookup(request)

    def _keyed_by_knowledge(
        self, builder: DecisionBuilder, exact_read: ExactRead | None
    ) -> ExactRead | None:
        """After an injection before the lookups: a knowledge-only one keeps the request
        cacheable under keys that name the injected items (`knowledge_digest.py`), read
        afresh; anything personal bypasses the shared cache."""
        digest = builder.memory.knowledge_digest
        _abandon(exact_read)
        if digest is None:
            builder.bypass(Reason.MEMORY_PERSONALIZED)
            return None
        builder.request = builder.request.with_knowledge(digest)
        return self._layers.start_exact_read(builder.request)

    async def _inject_memory(self, builder: DecisionBuilder, may_share: bool = False) -> None:
        with builder.timings.timed("memory"):
            if self._memory is not None:
                builder.injected(
                    await self._memory.run(
                        builder.request, builder.timings, builder.embedding, may_share
                    )
                )

    @staticmethod
    def _coalescible(builder: DecisionBuilder) -> bool:
        """Only requests whose answer anyone asking the same may get: cacheable, sent
        unchanged (no user memory injected) or with the tenant knowledge their key names
        (the same items, the same forwarded body), and not opted out by the client."""
        request = builder.request
        return (
            builder.cacheable
            and request.policy.single_flight.enabled
            and (builder.memory.tokens == 0 or request.knowledge_digest is not None)
            and not request.cache_control.no_cache
            and not request.cache_control.no_store
            # A follower on another replica polls the exact cache, where the entry
            # this request refused still is until the leader replaces it.
            and not builder.entry_refused
        )

    def _recheck(self, request: ChatRequest) -> Recheck | None:
        if not request.policy.exact_cache.enabled:
            return None
        return lambda: self._layers.recheck_exact(request)


# Event-loop turns a read needs to reach its socket or thread: redis-py's pool takes
# four (its connection check awaits a zero-timeout read), the SQLite store two. Fewer
# leave the read unsent until classification is over; each extra turn costs every
# request a task step, so no more turns than the read needs (see
# docs/measurements.md#read-start-turns).
_READ_START_TURNS = 4


async def _let_start(read: asyncio.Future[Any]) -> None:
    """Give a just-started read the loop turns it needs to go out before the caller
    runs synchronous work; stop early once it is done. Each idle turn costs a few µs,
    and under load the turns serve other requests."""
    for _ in range(_READ_START_TURNS):
        if read.done():
            return
        await asyncio.sleep(0)


def _abandon(read: asyncio.Future[Any] | None) -> None:
    """Drop an exact read nobody will wait for (the request was bypassed): its outcome,
    a failure included, was never going to be used and must not be reported."""
    if read is None:
        return
    read.cancel()
    read.add_done_callback(_consume)


def _consume(read: asyncio.Future[Any]) -> None:
    if not read.cancelled():
        read.exception()
