"""Stages 2 and 6 for the L1 exact cache: look up by canonical key; store answers."""

from __future__ import annotations

import logging
import time
from typing import Any

from gateway.cache.keys import exact_cache_key
from gateway.pipeline.cache_controls import entry_ttl_seconds
from gateway.pipeline.context import ChatContext
from gateway.storage.protocols import CachedCompletion, ExactCache
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)


class ExactCacheStage:
    """Lookup and store for one `ExactCache`. Store failures fail open."""

    name = "exact"

    def __init__(self, cache: ExactCache) -> None:
        self._cache = cache
        self._failures = ThrottledLogger(logger, interval_seconds=30.0)

    def key_for(self, ctx: ChatContext) -> str:
        if ctx.exact_key is None:
            ctx.exact_key = exact_cache_key(
                tenant=ctx.tenant,
                namespace=ctx.cache_namespace(),
                model=ctx.model,
                body=ctx.body,
            )
        return ctx.exact_key

    async def lookup(self, ctx: ChatContext) -> CachedCompletion | None:
        return await self._cache.get(self.key_for(ctx))

    async def store(self, ctx: ChatContext, completion: dict[str, Any]) -> None:
        entry = CachedCompletion(
            completion=completion,
            tenant=ctx.tenant,
            model=ctx.model,
            created_at=time.time(),
            namespace=ctx.cache_namespace(),
        )
        ttl_seconds = entry_ttl_seconds(ctx, ctx.policy.exact_cache.ttl_seconds)
        await self._cache.put(self.key_for(ctx), entry, ttl_seconds)

    def report_failure(self, operation: str, exc: BaseException) -> None:
        self._failures.warning(
            "exact cache %s failed (%s); serving from the provider", operation, type(exc).__name__
        )
