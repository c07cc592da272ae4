"""The pipeline with in-process fakes behind the project's own protocols."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from gateway.auth import Principal
from gateway.classify.classifier import Classification, NonCacheableClass
from gateway.errors import StoreUnavailableResponse, UpstreamError
from gateway.pipeline.cache_controls import CacheControl
from gateway.pipeline.classify import ClassifyStage
from gateway.pipeline.decision import Decision
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import ChatPipeline, CompletionOutcome, StreamOutcome
from gateway.policy.models import Policy
from gateway.providers.protocol import UpstreamReport
from gateway.storage.protocols import CachedCompletion
from gateway.telemetry.records import DecisionRecord


class MemoryCache:
    def __init__(self, broken: bool = False) -> None:
        self.entries: dict[str, CachedCompletion] = {}
        self.broken = broken

    async def get(self, key: str) -> CachedCompletion | None:
        if self.broken:
            raise OSError("disk on fire")
        return self.entries.get(key)

    async def put(self, key: str, entry: CachedCompletion, ttl_seconds: int) -> None:
        if self.broken:
            raise OSError("disk on fire")
        self.entries[key] = entry

    async def ping(self) -> bool:
        return not self.broken

    async def close(self) -> None:
        return None


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class ScriptedProvider:
    """Answers from a script; can fail mid-stream."""

    def __init__(self, fail_after_chunks: int | None = None) -> None:
        self.calls = 0
        self.fail_after_chunks = fail_after_chunks
        self.closed_streams = 0

    def has_model(self, model: str) -> bool:
        return True

    async def complete(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> dict[str, Any]:
        self.calls += 1
        return {
            "id": "x",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "ok"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    async def stream(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> AsyncGenerator[dict[str, Any], None]:
        self.calls += 1
        chunks = [
            _chunk({"role": "assistant", "content": ""}),
            _chunk({"content": "o"}),
            _chunk({"content": "k"}),
            _chunk({}, "stop"),
        ]
        try:
            for position, chunk in enumerate(chunks):
                if self.fail_after_chunks is not None and position == self.fail_after_chunks:
                    raise UpstreamError("boom")
                yield chunk
        finally:
            self.closed_streams += 1

    async def embed(self, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def close(self) -> None:
        return None


def _context(stream: bool = False, **kwargs: Any) -> ChatRequest:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    return ChatRequest(
        request_id="r",
        principal=Principal("acme"),
        model="m",
        body=body,
        policy=kwargs.pop("policy", Policy()),
        **kwargs,
    )


async def _run_to_completion(
    pipeline: ChatPipeline, request: ChatRequest
) -> tuple[Decision, DecisionRecord]:
    """The decision and, once the response is done, its record (what was stored)."""
    outcome = await pipeline.handle(request)
    assert isinstance(outcome, CompletionOutcome)
    return outcome.decision, await outcome.after_response()


async def test_non_stream_miss_then_hit() -> None:
    provider, cache = ScriptedProvider(), MemoryCache()
    pipeline = ChatPipeline(provider, ExactCacheStage(cache))
    outcome = await pipeline.handle(_context())
    assert isinstance(outcome, CompletionOutcome)
    assert cache.entries == {}  # the write waits until the response has been sent
    first = await outcome.after_response()
    assert (first.layer, first.reason, first.stored) == (Layer.MISS, Reason.NOT_FOUND, True)
    second, _ = await _run_to_completion(pipeline, _context())
    assert second.layer is Layer.EXACT and second.served is not None
    assert second.served.tokens_saved == 2
    assert provider.calls == 1


async def test_stream_abandoned_by_the_client_is_not_stored() -> None:
    provider, cache = ScriptedProvider(), MemoryCache()
    pipeline = ChatPipeline(provider, ExactCacheStage(cache))
    outcome = await pipeline.handle(_context(stream=True))
    assert isinstance(outcome, StreamOutcome)
    relay = outcome.chunks
    await anext(relay)  # type: ignore[call-overload]
    await relay.aclose()  # type: ignore[attr-defined]  # what a disconnect does
    assert cache.entries == {}
    assert provider.closed_streams == 1


async def test_stream_failing_midway_raises_and_is_not_stored() -> None:
    provider, cache = ScriptedProvider(fail_after_chunks=2), MemoryCache()
    pipeline = ChatPipeline(provider, ExactCacheStage(cache))
    outcome = await pipeline.handle(_context(stream=True))
    assert isinstance(outcome, StreamOutcome)
    with pytest.raises(UpstreamError) as caught:
        async for _ in outcome.chunks:
            pass
    assert caught.value.code == "upstream_stream_interrupted"
    assert cache.entries == {}


async def test_complete_stream_is_stored() -> None:
    provider, cache = ScriptedProvider(), MemoryCache()
    pipeline = ChatPipeline(provider, ExactCacheStage(cache))
    outcome = await pipeline.handle(_context(stream=True))
    assert isinstance(outcome, StreamOutcome)
    _ = [chunk async for chunk in outcome.chunks]
    (entry,) = cache.entries.values()
    assert entry.completion["choices"][0]["message"]["content"] == "ok"


async def test_broken_store_fails_open() -> None:
    provider = ScriptedProvider()
    pipeline = ChatPipeline(provider, ExactCacheStage(MemoryCache(broken=True)))
    outcome = await pipeline.handle(_context())
    assert isinstance(outcome, CompletionOutcome)
    record = await outcome.after_response()
    assert outcome.decision.reason is Reason.STORE_UNAVAILABLE and not record.stored


async def test_disabled_policy_bypasses_and_never_stores() -> None:
    provider, cache = ScriptedProvider(), MemoryCache()
    pipeline = ChatPipeline(provider, ExactCacheStage(cache))
    policy = Policy.model_validate(
        {"exact_cache": {"enabled": False}, "semantic_cache": {"enabled": False}}
    )
    for _ in range(2):
        decision, _ = await _run_to_completion(pipeline, _context(policy=policy))
        assert (decision.layer, decision.reason) == (Layer.BYPASS, Reason.POLICY_DISABLED)
    assert provider.calls == 2 and cache.entries == {}


async def test_no_store_and_no_cache() -> None:
    provider, cache = ScriptedProvider(), MemoryCache()
    pipeline = ChatPipeline(provider, ExactCacheStage(cache))
    await _run_to_completion(pipeline, _context(cache_control=CacheControl(no_store=True)))
    assert cache.entries == {}
    decision, _ = await _run_to_completion(
        pipeline, _context(cache_control=CacheControl(no_cache=True))
    )
    assert decision.reason is Reason.CLIENT_NO_CACHE and len(cache.entries) == 1


async def test_a_failing_store_fails_open_by_default_and_closed_on_request() -> None:
    provider = ScriptedProvider()
    failures: list[tuple[str, str]] = []
    pipeline = ChatPipeline(
        provider,
        ExactCacheStage(MemoryCache(broken=True)),
        on_store_failure=lambda store, operation: failures.append((store, operation)),
    )
    decision, _ = await _run_to_completion(pipeline, _context())
    assert decision.reason is Reason.STORE_UNAVAILABLE and provider.calls == 1
    assert failures == [("exact_cache", "lookup"), ("exact_cache", "store")]

    closed = Policy.model_validate({"failure": {"exact_cache": "closed"}})
    with pytest.raises(StoreUnavailableResponse):
        await pipeline.handle(_context(policy=closed))
    assert provider.calls == 1  # never reached the provider


class AlwaysTimeSensitive:
    """A classifier that bypasses every request (as a policy change can make it do)."""

    def classify(self, *args: Any, **kwargs: Any) -> Classification:
        return Classification(NonCacheableClass.TIME_SENSITIVE, "test.always")


async def test_a_bypassed_request_is_never_served_from_the_exact_read_started_early() -> None:
    # The exact read starts before classification; its answer must not be used once
    # the classifier says bypass, even though an entry for this very request exists.
    provider, cache = ScriptedProvider(), MemoryCache()
    await _run_to_completion(ChatPipeline(provider, ExactCacheStage(cache)), _context())
    assert len(cache.entries) == 1
    bypassing = ChatPipeline(
        provider,
        ExactCacheStage(cache),
        classify=ClassifyStage(AlwaysTimeSensitive()),  # type: ignore[arg-type]
    )
    decision, _ = await _run_to_completion(bypassing, _context())
    assert (decision.layer, decision.reason) == (Layer.BYPASS, Reason.TIME_SENSITIVE)
    assert provider.calls == 2


async def test_a_failed_early_read_of_a_bypassed_request_is_not_reported() -> None:
    provider = ScriptedProvider()
    failures: list[tuple[str, str]] = []
    pipeline = ChatPipeline(
        provider,
        ExactCacheStage(MemoryCache(broken=True)),
        classify=ClassifyStage(AlwaysTimeSensitive()),  # type: ignore[arg-type]
        on_store_failure=lambda store, operation: failures.append((store, operation)),
    )
    decision, _ = await _run_to_completion(pipeline, _context())
    assert decision.layer is Layer.BYPASS and provider.calls == 1
    assert failures == []
