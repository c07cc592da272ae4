"""Runs a chat request through the stages and returns what to send back.

    classify -> [memory] -> exact lookup -> semantic lookup -> memory -> forward -> store

Memory runs once: before the lookups for a request with a user (policy
`memory.bypass_cache_when_injected`, the default), where an injected block makes it
skip the shared cache (`memory_personalized`); otherwise after them, on a miss.

A cache hit ends the run early. Stores happen only for cacheable requests whose answer
finished normally, and for streams only once the last chunk has arrived: an aborted or
failed stream is never stored.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from gateway.adaptive.shadow import ShadowVerifier
from gateway.completions import (
    StreamAssembler,
    finished_normally,
    new_completion_id,
    normalise_completion,
)
from gateway.errors import StoreUnavailableError, UpstreamError
from gateway.pipeline.classify import ClassifyStage
from gateway.pipeline.context import ChatContext
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.memory import MemoryStage
from gateway.pipeline.namespaces import NamespaceLimiter
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.semantic import SemanticCacheStage
from gateway.pipeline.serve_check import why_not_servable
from gateway.pipeline.single_flight import Flight, Recheck, SingleFlight
from gateway.policy.models import Policy
from gateway.providers.protocol import Provider
from gateway.storage.protocols import CachedCompletion


@dataclass(frozen=True, slots=True)
class CompletionOutcome:
    """A whole `chat.completion`: from a cache layer or from the provider.

    `after_response` (stores the answer) is run by the caller once the response has been
    sent, so the client does not wait for the cache write.
    """

    completion: dict[str, Any]
    after_response: Callable[[], Awaitable[None]] | None = None


@dataclass(frozen=True, slots=True)
class StreamOutcome:
    """Upstream chunks, passed through as they arrive; the first is already fetched."""

    chunks: AsyncIterator[dict[str, Any]]


Outcome = CompletionOutcome | StreamOutcome
# (store, operation): counts a failed store operation (metrics).
StoreFailureHook = Callable[[str, str], None]
# (tenant, model) -> the policy in force for that model (the policy store's resolve).
PolicyResolver = Callable[[str, str], Policy]


# What a cached answer reports as spent upstream: nothing. What it saved is in the
# decision record and the `x-gateway-tokens-saved` header.
_ZERO_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


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
    ) -> None:
        self._provider = provider
        self._shadow = shadow
        self._policy_for = policy_for
        self._namespaces = namespaces
        self._flights = single_flight
        self._on_store_failure = on_store_failure
        self._exact = exact
        self._semantic = semantic
        self._classify = classify or ClassifyStage(None)
        self._memory = memory

    async def run(self, ctx: ChatContext) -> Outcome:
        # The exact-cache read (a round trip to the store's thread or to Redis) starts
        # before classification and runs while it does; its answer is used only if
        # the request turns out cacheable.
        exact_read = self._start_exact_read(ctx)
        try:
            if exact_read is not None:
                await _let_start(exact_read)
            with ctx.timed("classify"):
                await ctx.prepare_turn()
                self._classify.run(ctx)
                if (
                    ctx.cacheable
                    and self._namespaces is not None
                    and not self._namespaces.admit(ctx.tenant, ctx.namespace)
                ):
                    ctx.decide(Layer.BYPASS, Reason.NAMESPACE_LIMIT)
        except BaseException:
            _abandon(exact_read)
            raise
        memory_done = False
        if ctx.cacheable and self._memory_before_lookup(ctx):
            memory_done = True
            with ctx.timed("memory"):
                await self._memory_run(ctx)
            if ctx.memory_tokens > 0:
                ctx.decide(Layer.BYPASS, Reason.MEMORY_PERSONALIZED)
        if ctx.cacheable:
            hit = await self._lookup(ctx, exact_read)
            if hit is not None:
                return hit
        else:
            _abandon(exact_read)
        if not memory_done:
            with ctx.timed("memory"):
                await self._memory_run(ctx)
        flight: Flight | None = None
        if self._flights is not None and self._coalescible(ctx):
            with ctx.timed("single_flight"):
                joined = await self._flights.join(
                    self._exact.key_for(ctx),
                    ctx.policy.single_flight.wait_seconds,
                    recheck=self._recheck_exact(ctx),
                )
            if joined.shared is not None:
                return self._serve_shared(ctx, joined.shared)
            flight = joined.flight
        if ctx.stream:
            return await self._forward_stream(ctx, flight)
        try:
            with ctx.timed("forward"):
                completion = await self._provider.complete(ctx.body, report=ctx.upstream)
        except BaseException:
            await self._end_flight(flight, None)
            raise
        if flight is not None and self._flights is not None:
            self._flights.share(flight, self._shareable(ctx, completion))

        async def store() -> None:
            try:
                await self._store(ctx, completion)
            finally:
                # Replicas poll the exact cache: free their lease only once stored.
                await self._end_flight(flight, self._shareable(ctx, completion))
                self._after_forward(ctx, completion)

        return CompletionOutcome(completion, after_response=store)

    def _after_forward(self, ctx: ChatContext, completion: dict[str, Any]) -> None:
        """Shadow verification of a forwarded answer, in its own task."""
        if self._shadow is not None:
            self._shadow.schedule(ctx, completion)

    def _memory_before_lookup(self, ctx: ChatContext) -> bool:
        """Memory first when it may personalise the answer: the shared cache is then
        used only if nothing of this user's was injected."""
        policy = ctx.policy.memory
        return (
            self._memory is not None
            and policy.enabled
            and policy.bypass_cache_when_injected
            and bool(ctx.user)
        )

    async def _memory_run(self, ctx: ChatContext) -> None:
        if self._memory is not None:
            await self._memory.run(ctx)

    @staticmethod
    def _shareable(ctx: ChatContext, completion: dict[str, Any]) -> dict[str, Any] | None:
        """The leader's answer for its followers, unless a fallback model gave it:
        followers asked for the requested model and would be served the answer as
        that model's. They forward on their own instead (and fall back themselves)."""
        return completion if ctx.answered_by == ctx.model else None

    def _coalescible(self, ctx: ChatContext) -> bool:
        """Only requests whose answer anyone asking the same may get: cacheable, sent
        unchanged (no user memory injected), and not opted out by the client."""
        return (
            ctx.cacheable
            and ctx.policy.single_flight.enabled
            and ctx.memory_tokens == 0
            and not ctx.cache_control.no_cache
            and not ctx.cache_control.no_store
            # A follower on another replica polls the exact cache, where the entry
            # this request refused still is until the leader replaces it.
            and not ctx.entry_refused
        )

    def _recheck_exact(self, ctx: ChatContext) -> Recheck | None:
        """The exact read again, for a request about to lead its flight: an identical
        request may have stored its answer since this one's first read."""
        if not ctx.policy.exact_cache.enabled:
            return None

        async def recheck() -> dict[str, Any] | None:
            cached = await self._exact.lookup(ctx)
            if cached is None or why_not_servable(ctx, cached.completion, cached.created_at):
                return None
            return cached.completion

        return recheck

    def _serve_shared(self, ctx: ChatContext, completion: dict[str, Any]) -> CompletionOutcome:
        ctx.decide(Layer.EXACT)
        ctx.coalesced = True
        entry = CachedCompletion(
            completion=completion, tenant=ctx.tenant, model=ctx.model, created_at=time.time()
        )
        return self._serve(ctx, entry)

    async def _end_flight(self, flight: Flight | None, completion: dict[str, Any] | None) -> None:
        if flight is None or self._flights is None:
            return
        self._flights.share(flight, completion)
        await self._flights.release(flight)

    def _semantic_enabled(self, ctx: ChatContext) -> bool:
        return self._semantic is not None and ctx.policy.semantic_cache.enabled

    def _start_exact_read(self, ctx: ChatContext) -> asyncio.Future[CachedCompletion | None] | None:
        if not ctx.policy.exact_cache.enabled or ctx.cache_control.no_cache:
            return None
        return asyncio.ensure_future(self._exact.lookup(ctx))

    async def _lookup(
        self, ctx: ChatContext, exact_read: asyncio.Future[CachedCompletion | None] | None
    ) -> CompletionOutcome | None:
        if ctx.cache_control.no_cache:
            ctx.decide(Layer.MISS, Reason.CLIENT_NO_CACHE)
            if (
                self._shadow is not None
                and ctx.policy.exact_cache.enabled
                and self._shadow.sample_repeat(ctx)
            ):
                # The entry this request skips, read alongside the forward: a judge
                # shown it and the fresh answer sees a pair known to be the same.
                ctx.prior_exact_read = asyncio.ensure_future(self._exact.lookup(ctx))
            return None
        exact_refusal: Reason | None = None
        if exact_read is not None:
            with ctx.timed("exact_lookup"):
                try:
                    cached = await exact_read
                except Exception as exc:
                    self._store_failed(ctx, "exact_cache", "lookup", exc)
                    ctx.decide(Layer.MISS, Reason.STORE_UNAVAILABLE)
                    cached = None
                else:
                    if cached is not None:
                        exact_refusal = why_not_servable(ctx, cached.completion, cached.created_at)
                        if exact_refusal is None:
                            ctx.decide(Layer.EXACT)
                            return self._serve(ctx, cached)
                        ctx.entry_refused = True
                        ctx.decide(Layer.MISS, exact_refusal)
                    else:
                        ctx.decide(Layer.MISS, Reason.NOT_FOUND)
        if self._semantic is not None and self._semantic_enabled(ctx):
            try:
                cached = await self._semantic.lookup(ctx)
            except Exception as exc:
                self._store_failed(ctx, "semantic_cache", "lookup", exc)
                ctx.decide(Layer.MISS, Reason.STORE_UNAVAILABLE)
                return None
            if cached is not None:
                return self._serve(ctx, cached)
        if exact_refusal is not None:
            # The identical request's entry is the one that explains this miss.
            ctx.decide(Layer.MISS, exact_refusal)
        return None

    def _store_failed(
        self,
        ctx: ChatContext,
        store: Literal["exact_cache", "semantic_cache"],
        operation: str,
        exc: BaseException,
    ) -> None:
        """Log and count; on a lookup, fail closed if the policy says so (a failed
        write happens after the answer was sent: nothing left to refuse)."""
        if store == "exact_cache":
            self._exact.report_failure(operation, exc)
        elif self._semantic is not None:
            self._semantic.report_failure(operation, exc)
        if self._on_store_failure is not None:
            self._on_store_failure(store, operation)
        if operation == "lookup" and getattr(ctx.policy.failure, store) == "closed":
            raise StoreUnavailableError(
                f"The {store.replace('_', ' ')} is unavailable and this policy fails closed."
            ) from exc

    @staticmethod
    def _serve(ctx: ChatContext, cached: CachedCompletion) -> CompletionOutcome:
        """The stored answer as this request's answer: the gateway's id and the
        requested model name; usage says nothing was spent upstream."""
        usage = cached.completion.get("usage") or {}
        ctx.served_age_seconds = max(0, int(time.time() - cached.created_at))
        ctx.tokens_saved = int(usage.get("total_tokens") or 0)
        ctx.saved_usage = dict(usage)
        completion = {
            **cached.completion,
            "id": new_completion_id(),
            "created": int(time.time()),
            "model": ctx.model,
            "usage": dict(_ZERO_USAGE),
        }
        return CompletionOutcome(completion)

    def _should_store(self, ctx: ChatContext, completion: dict[str, Any]) -> bool:
        return (
            ctx.cacheable
            and not ctx.cache_control.no_store
            # An answer written with this user's memories in the prompt is about this
            # user: it never goes into the shared cache.
            and ctx.memory_tokens == 0
            and finished_normally(completion, ctx.policy.cacheable_finish_reasons)
        )

    def _store_context(self, ctx: ChatContext) -> ChatContext | None:
        """The request as the model that answered it: the context itself, or, when a
        fallback model answered, a copy keyed (exact key, semantic fingerprint) and
        governed (TTL, which caches) as a request for that model. None: not stored.

        Stored under the requested model's key, the fallback's answer would be served as
        the requested model's for the whole TTL, long after that model is back."""
        answered_by = ctx.answered_by
        if answered_by == ctx.model:
            return ctx
        if not ctx.policy.cache_fallback_answers:
            return None
        policy = self._policy_for(ctx.tenant, answered_by) if self._policy_for else ctx.policy
        return dataclasses.replace(
            ctx, model=answered_by, policy=policy, exact_key=None, fingerprint=None
        )

    async def store_answer(self, ctx: ChatContext, completion: dict[str, Any]) -> None:
        """Stage 6 alone, for an answer obtained elsewhere (`gateway cache import`):
        the same rules, keys and TTLs as for a forwarded answer; `ctx.stored` says
        whether any layer took it."""
        await self._store(ctx, completion)

    async def _store(self, ctx: ChatContext, completion: dict[str, Any]) -> None:
        target = self._store_context(ctx)
        if target is None or not self._should_store(target, completion):
            return
        # One stored shape whether the answer came as JSON or as a stream.
        completion = normalise_completion(completion)
        stored = False
        with ctx.timed("store"):
            if target.policy.exact_cache.enabled:
                try:
                    await self._exact.store(target, completion)
                    stored = True
                except Exception as exc:
                    self._store_failed(target, "exact_cache", "store", exc)
            if self._semantic is not None and self._semantic_enabled(target):
                try:
                    await self._semantic.store(target, completion)
                    stored = True
                except Exception as exc:
                    self._store_failed(target, "semantic_cache", "store", exc)
        ctx.stored = stored

    async def _forward_stream(self, ctx: ChatContext, flight: Flight | None) -> StreamOutcome:
        upstream = self._provider.stream(ctx.body, report=ctx.upstream)
        forward_started = time.perf_counter()
        # Fetch the first chunk before answering, so that a provider that fails at once
        # gets a proper HTTP error status instead of a broken 200 stream.
        try:
            first = await anext(upstream)
        except StopAsyncIteration:
            await self._end_flight(flight, None)
            raise UpstreamError(
                f"The provider for model '{ctx.model}' sent an empty stream."
            ) from None
        except BaseException:
            await self._end_flight(flight, None)
            raise
        ctx.timings_ms["forward_first_chunk"] = round(
            (time.perf_counter() - forward_started) * 1000, 3
        )
        return StreamOutcome(self._relay(ctx, first, upstream, flight))

    async def _relay(
        self,
        ctx: ChatContext,
        first: dict[str, Any],
        upstream: AsyncGenerator[dict[str, Any], None],
        flight: Flight | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        assembler = StreamAssembler()
        assembler.add(first)
        completion: dict[str, Any] | None = None
        try:
            try:
                yield first
                async for chunk in upstream:
                    assembler.add(chunk)
                    yield chunk
            except UpstreamError as exc:
                raise UpstreamError(
                    f"The provider's stream for model '{ctx.model}' broke off before the end.",
                    code="upstream_stream_interrupted",
                ) from exc
            finally:
                # On a client disconnect this closes the upstream call too.
                await upstream.aclose()
            # Reached only when the upstream stream ended normally and the client is
            # still reading: a disconnect cancels this generator before this line.
            completion = assembler.completion()
            if flight is not None and self._flights is not None:
                self._flights.share(flight, self._shareable(ctx, completion))
            await self._store(ctx, completion)
            self._after_forward(ctx, completion)
        finally:
            # Followers of a broken or abandoned stream forward on their own.
            await self._end_flight(
                flight, None if completion is None else self._shareable(ctx, completion)
            )


# Event-loop turns a read needs to reach its socket or thread: redis-py's pool takes
# four (its connection check awaits a zero-timeout read), the SQLite store two. With
# Redis at c=1, one turn left the read unsent until classification was over, and 0.29
# ms were waited for it afterwards; with four, 0.002 ms. Each turn is a task step of
# this request (~4 µs): six turns cost Redis exact hits ~5 % of their req/s at c=16
# against one turn, measured side by side, so no more turns than the read needs.
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
