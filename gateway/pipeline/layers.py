"""The two cache layers together: the lookup that decides hit or miss, and the store
after a forwarded answer, with each store's failure handling.

A failed store is logged by its stage, counted (`on_store_failure`), and then handled
by the policy's failure mode for that store: `open` goes on as a miss (a write failure
is never more than that: the answer was sent already), `closed` refuses a lookup with
503.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from gateway.errors import StoreUnavailableResponse
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.semantic import SemanticCacheStage
from gateway.pipeline.serve_check import why_not_servable
from gateway.pipeline.values import Hit, Lookup, Miss, QueryEmbedding, Timings
from gateway.policy.models import FailureMode, FailurePolicy
from gateway.storage.protocols import CachedCompletion

# (store, operation): counts a failed store operation (metrics).
StoreFailureHook = Callable[[str, str], None]
ExactRead = asyncio.Future[CachedCompletion | None]


@dataclass(frozen=True, slots=True)
class _Store:
    """One cache store as failure handling sees it."""

    name: Literal["exact_cache", "semantic_cache"]  # the metric label
    report: Callable[[str, BaseException], None]  # the stage's throttled log line
    mode: Callable[[FailurePolicy], FailureMode]


class CacheLayers:
    def __init__(
        self,
        exact: ExactCacheStage,
        semantic: SemanticCacheStage | None = None,
        on_store_failure: StoreFailureHook | None = None,
    ) -> None:
        self.exact = exact
        self.semantic = semantic
        self._on_store_failure = on_store_failure
        self._exact_store = _Store("exact_cache", exact.report_failure, _exact_mode)
        self._semantic_store = (
            None
            if semantic is None
            else _Store("semantic_cache", semantic.report_failure, _semantic_mode)
        )

    def start_exact_read(self, request: ChatRequest) -> ExactRead | None:
        """The exact read, started before classification so that it runs meanwhile;
        None when the request will not read the exact layer."""
        if not request.policy.exact_cache.enabled or request.cache_control.no_cache:
            return None
        return asyncio.ensure_future(self.exact.lookup(request))

    def read_again(self, request: ChatRequest) -> ExactRead:
        """The exact read for a `no-cache` request whose entry the shadow judges."""
        return asyncio.ensure_future(self.exact.lookup(request))

    async def lookup(
        self,
        request: ChatRequest,
        exact_read: ExactRead | None,
        timings: Timings,
        embedding: QueryEmbedding | None,
    ) -> Lookup | None:
        """Exact, then semantic. A miss is explained by the identical request's entry
        when the exact layer found one it could not serve, else by the last layer.
        None: no layer was looked in."""
        result: Lookup | None = None
        exact_refusal: Reason | None = None
        if exact_read is not None:
            with timings.timed("exact_lookup"):
                result = await self._exact_lookup(request, exact_read)
            if isinstance(result, Hit):
                return result
            if result.entry_refused:
                exact_refusal = result.reason
        semantic = self.semantic
        if semantic is not None and request.policy.semantic_cache.enabled:
            try:
                found = await semantic.lookup(request, timings, embedding)
            except Exception as exc:
                self._failed(self._semantic_store, request, "lookup", exc)
                return Miss(Reason.STORE_UNAVAILABLE, entry_refused=exact_refusal is not None)
            if isinstance(found, Hit):
                return found
            result = Miss(
                exact_refusal or found.reason,
                found.diagnostics,
                found.query_embedding,
                entry_refused=exact_refusal is not None or found.entry_refused,
            )
        return result

    async def _exact_lookup(self, request: ChatRequest, read: ExactRead) -> Lookup:
        try:
            cached = await read
        except Exception as exc:
            self._failed(self._exact_store, request, "lookup", exc)
            return Miss(Reason.STORE_UNAVAILABLE)
        if cached is None:
            return Miss(Reason.NOT_FOUND)
        refusal = why_not_servable(request, cached.completion, cached.created_at)
        if refusal is None:
            return Hit(cached, Layer.EXACT)
        return Miss(refusal, entry_refused=True)

    async def recheck_exact(self, request: ChatRequest) -> dict[str, Any] | None:
        """The exact read again, for a request about to lead its flight: an identical
        request may have stored its answer since this one's first read."""
        cached = await self.exact.lookup(request)
        if cached is None or why_not_servable(request, cached.completion, cached.created_at):
            return None
        return cached.completion

    async def store(
        self,
        request: ChatRequest,
        completion: dict[str, Any],
        embedding: QueryEmbedding | None,
    ) -> bool:
        """Stores in every enabled layer; whether any took it (failures fail open)."""
        stored = False
        if request.policy.exact_cache.enabled:
            try:
                await self.exact.store(request, completion)
                stored = True
            except Exception as exc:
                self._failed(self._exact_store, request, "store", exc)
        semantic = self.semantic
        if semantic is not None and request.policy.semantic_cache.enabled:
            try:
                await semantic.store(request, completion, embedding)
                stored = True
            except Exception as exc:
                assert self._semantic_store is not None
                self._failed(self._semantic_store, request, "store", exc)
        return stored

    def _failed(
        self,
        store: _Store | None,
        request: ChatRequest,
        operation: str,
        exc: BaseException,
    ) -> None:
        """Log and count; on a lookup, fail closed if the policy says so (a failed
        write happens after the answer was sent: nothing left to refuse)."""
        assert store is not None
        store.report(operation, exc)
        if self._on_store_failure is not None:
            self._on_store_failure(store.name, operation)
        if operation == "lookup" and store.mode(request.policy.failure) == "closed":
            raise StoreUnavailableResponse(
                f"The {store.name.replace('_', ' ')} is unavailable and this policy fails closed."
            ) from exc


def _exact_mode(failure: FailurePolicy) -> FailureMode:
    return failure.exact_cache


def _semantic_mode(failure: FailurePolicy) -> FailureMode:
    return failure.semantic_cache
