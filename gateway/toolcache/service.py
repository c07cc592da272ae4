"""What `/v1/tool-cache` does, without HTTP: look up, store and delete tool results by
their canonical key, within the tenant's policy, counted in `ToolCacheStats`.

Errors are never stored: a put whose `status` is 400 or more, whose `is_error` is true,
or whose result says it is an error (an object with `isError`/`is_error` true, as MCP's
tool results do, or with a non-null `error` member, as JSON-RPC and most HTTP APIs do)
is refused and counted. No result content is ever logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gateway.policy.tool_cache import ToolCachePolicy
from gateway.storage.agent_protocols import ToolCacheStore
from gateway.storage.protocols import StoreUnavailable
from gateway.toolcache.keys import ToolCall, tool_cache_key
from gateway.toolcache.records import ToolCacheEntry, ToolCacheFilter
from gateway.toolcache.stats import LookupOutcome, PutOutcome, ToolCacheStats

logger = logging.getLogger(__name__)

# Members of a result object that flag it as an error.
_ERROR_FLAGS = ("isError", "is_error")


class ToolResultIsError(ValueError):
    """The result is an error; `reason` says which sign gave it away."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ToolResultTooBig(ValueError):
    def __init__(self, size_bytes: int, max_bytes: int) -> None:
        super().__init__(f"{size_bytes} > {max_bytes} bytes")
        self.size_bytes = size_bytes
        self.max_bytes = max_bytes


@dataclass(frozen=True, slots=True)
class LookupResult:
    outcome: LookupOutcome
    entry: ToolCacheEntry | None  # set on a hit
    key: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a put stores: the result's JSON (as sent) and what the client said of it."""

    result: Any
    result_json: bytes
    status: int | None = None
    is_error: bool = False


def error_reason(put: ToolResult) -> str | None:
    """Why this result is an error (never cached), or None."""
    if put.status is not None and put.status >= 400:
        return f"status {put.status}"
    if put.is_error:
        return "is_error is true"
    result = put.result
    if isinstance(result, dict):
        for flag in _ERROR_FLAGS:
            if result.get(flag) is True:
                return f"the result's '{flag}' is true"
        if result.get("error") is not None:
            return "the result has an 'error' member"
    return None


class ToolCacheService:
    def __init__(
        self,
        store: ToolCacheStore,
        stats: ToolCacheStats,
        on_store_failure: Callable[[str, str], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self.stats = stats
        self._on_store_failure = on_store_failure
        self._clock = clock

    def now(self) -> float:
        return self._clock()

    async def lookup(self, call: ToolCall, max_age_seconds: float | None) -> LookupResult:
        """A hit, a miss, or a stale entry (older than `max_age_seconds`). A failing
        store is answered as a miss (the agent calls its tool) and counted."""
        key = tool_cache_key(call)
        try:
            entry = await self._store.get(call.tenant, key)
        except StoreUnavailable:
            logger.warning("tool-cache lookup failed: store unavailable (served as a miss)")
            self._failed("get")
            return self._counted(call.tenant, LookupOutcome.ERROR, None, key)
        if entry is None:
            return self._counted(call.tenant, LookupOutcome.MISS, None, key)
        if max_age_seconds is not None and self._clock() - entry.stored_at > max_age_seconds:
            return self._counted(call.tenant, LookupOutcome.STALE, None, key)
        return self._counted(call.tenant, LookupOutcome.HIT, entry, key)

    async def put(
        self, call: ToolCall, put: ToolResult, ttl_seconds: int, policy: ToolCachePolicy
    ) -> ToolCacheEntry:
        """Stores the result; raises `ToolResultIsError` or `ToolResultTooBig` (counted,
        nothing stored), or `StoreUnavailable`."""
        reason = error_reason(put)
        if reason is not None:
            self.stats.put(call.tenant, PutOutcome.REFUSED_ERROR)
            raise ToolResultIsError(reason)
        if len(put.result_json) > policy.max_result_bytes:
            self.stats.put(call.tenant, PutOutcome.REFUSED_TOO_LARGE)
            raise ToolResultTooBig(len(put.result_json), policy.max_result_bytes)
        now = self._clock()
        entry = ToolCacheEntry(
            key=tool_cache_key(call),
            tenant=call.tenant,
            namespace=call.namespace,
            tool=call.tool,
            method=call.method,
            target=call.target,
            result=put.result_json,
            stored_at=now,
            expires_at=now + ttl_seconds,
        )
        try:
            await self._store.put(entry)
        except StoreUnavailable:
            self._failed("put")
            raise
        self.stats.put(call.tenant, PutOutcome.STORED)
        return entry

    async def delete(self, tool_filter: ToolCacheFilter) -> int:
        try:
            deleted = await self._store.delete(tool_filter)
        except StoreUnavailable:
            self._failed("delete")
            raise
        self.stats.deleted(tool_filter.tenant, deleted)
        return deleted

    def _counted(
        self, tenant: str, outcome: LookupOutcome, entry: ToolCacheEntry | None, key: str
    ) -> LookupResult:
        self.stats.lookup(tenant, outcome)
        return LookupResult(outcome, entry, key)

    def _failed(self, operation: str) -> None:
        if self._on_store_failure is not None:
            self._on_store_failure("tool_cache", operation)
