"""The tool-cache service: what counts as an error result, and a failing store answered
as a miss (lookups) or raised (puts), counted, and never logged with the result."""

from __future__ import annotations

import logging

import orjson
import pytest

from gateway.policy.tool_cache import ToolCachePolicy
from gateway.storage.protocols import StoreUnavailable
from gateway.toolcache.keys import ToolCall
from gateway.toolcache.records import ToolCacheEntry, ToolCacheFilter
from gateway.toolcache.service import ToolCacheService, ToolResult, error_reason
from gateway.toolcache.stats import LookupOutcome, ToolCacheStats


class BrokenStore:
    async def get(self, tenant: str, key: str) -> ToolCacheEntry | None:
        raise StoreUnavailable("down")

    async def put(self, entry: ToolCacheEntry) -> None:
        raise StoreUnavailable("down")

    async def delete(self, tool_filter: ToolCacheFilter) -> int:
        raise StoreUnavailable("down")

    async def close(self) -> None:
        return None


def _result(value: object, status: int | None = None, is_error: bool = False) -> ToolResult:
    return ToolResult(value, orjson.dumps(value), status=status, is_error=is_error)


def test_error_results_are_recognised() -> None:
    assert error_reason(_result({"items": []}, status=500)) == "status 500"
    assert error_reason(_result({"items": []}, is_error=True)) == "is_error is true"
    assert error_reason(_result({"isError": True})) is not None
    assert error_reason(_result({"is_error": True})) is not None
    assert error_reason(_result({"error": "boom"})) is not None
    assert error_reason(_result({"items": []}, status=200)) is None
    assert error_reason(_result({"error": None})) is None
    assert error_reason(_result({"isError": False})) is None
    assert error_reason(_result("error: looks like one, but a string is data")) is None


async def test_a_failing_store_is_a_counted_miss_and_logs_no_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failures: list[tuple[str, str]] = []
    stats = ToolCacheStats()
    service = ToolCacheService(
        BrokenStore(), stats, on_store_failure=lambda s, o: failures.append((s, o))
    )
    call = ToolCall(tenant="acme", namespace="", tool="search", arguments={"q": "hunter2-query"})
    with caplog.at_level(logging.DEBUG):
        found = await service.lookup(call, None)
        with pytest.raises(StoreUnavailable):
            await service.put(call, _result({"secret": "hunter2-result"}), 60, ToolCachePolicy())
    assert found.outcome is LookupOutcome.ERROR and found.entry is None
    assert failures == [("tool_cache", "get"), ("tool_cache", "put")]
    assert stats.snapshot()["lookups"]["error"] == 1
    assert stats.snapshot()["puts"]["stored"] == 0
    assert "hunter2" not in caplog.text
