"""Stages 2 and 6 for the L1 exact cache: look up by canonical key; store answers."""

from __future__ import annotations

import logging
import time
from typing import Any

from gateway.pipeline.cache_controls import entry_ttl_seconds
from gateway.pipeline.request import ChatRequest
from gateway.storage.protocols import CachedCompletion, ExactCache
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)


class ExactCacheStage:
    """Lookup and store for one `ExactCache`, by the request's exact key."""

    def __init__(self, cache: ExactCache) -> None:
        self._cache = cache
        self._failures = ThrottledLogger(logger, interval_seconds=30.0)

    async def lookup(self, request: ChatRequest) -> CachedCompletion | None:
        return await self._cache.get(request.exact_key)

    async def store(self, request: ChatRequest, completion: dict[str, Any]) -> None:
        entry = CachedCompletion(
            completion=completion,
            tenant=request.tenant,
            model=request.model,
            created_at=time.time(),
            namespace=request.cache_namespace(),
        )
        ttl_seconds = entry_ttl_seconds(request, request.policy.exact_cache.ttl_seconds)
        await self._cache.put(request.exact_key, entry, ttl_seconds)

    def report_failure(self, operation: str, exc: BaseException) -> None:
        self._failures.warning(
            "exact cache %s failed (%s); serving from the provider", operation, type(exc).__name__
        )
