"""Per-request cache controls (issue 15, item 12): `Cache-Control: max-age=N` serves only
entries at most N seconds old, `x-gateway-cache-ttl: N` sets the stored entries' TTL;
both within what the policy allows. Through the pipeline with in-process fakes."""

from __future__ import annotations

import time
from typing import Any

import pytest

from gateway.auth import Principal
from gateway.pipeline.cache_controls import CacheControl, entry_ttl_seconds
from gateway.pipeline.decision import Decision
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import ChatPipeline, CompletionOutcome
from gateway.policy.models import Policy
from gateway.storage.protocols import CachedCompletion
from gateway.testing.fakes import MemoryExactCache
from tests.unit.test_pipeline import ScriptedProvider


class TtlRecordingCache(MemoryExactCache):
    def __init__(self) -> None:
        super().__init__()
        self.ttls: list[int] = []

    async def put(self, key: str, entry: CachedCompletion, ttl_seconds: int) -> None:
        self.ttls.append(ttl_seconds)
        await super().put(key, entry, ttl_seconds)


def _context(cache_control: CacheControl, policy: dict[str, Any] | None = None) -> ChatRequest:
    return ChatRequest(
        request_id="r",
        principal=Principal("acme"),
        model="m",
        body={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        policy=Policy.model_validate(policy or {}),
        cache_control=cache_control,
    )


async def _run(pipeline: ChatPipeline, ctx: ChatRequest) -> Decision:
    outcome = await pipeline.handle(ctx)
    assert isinstance(outcome, CompletionOutcome)
    await outcome.after_response()
    return outcome.decision


@pytest.mark.parametrize(
    ("header", "max_age"),
    [
        ("max-age=30", 30),
        ("Max-Age = 30", 30),
        ('max-age="30"', 30),
        ("max-age=60, max-age=5", 5),  # repeated: the strictest
        ("max-age=0", 0),
        ("max-age=abc", None),  # unreadable: ignored, as HTTP caches do
        ("max-age=-1", None),
        ("max-age=1e3", None),
        ("max-age=", None),
        ("no-cache", None),
    ],
)
def test_max_age_is_read_as_delta_seconds(header: str, max_age: int | None) -> None:
    assert CacheControl.parse(header).max_age_seconds == max_age


async def test_max_age_refuses_an_older_entry_and_serves_a_younger_one() -> None:
    provider, cache = ScriptedProvider(), MemoryExactCache()
    stage = ExactCacheStage(cache)
    pipeline = ChatPipeline(provider, stage)
    stored = _context(CacheControl())
    await _run(pipeline, stored)
    (key,) = cache.entries
    entry = cache.entries[key]
    # The entry was stored 100 seconds ago.
    await cache.put(
        key, CachedCompletion(entry.completion, "acme", "m", time.time() - 100), ttl_seconds=3600
    )

    young_enough = _context(CacheControl(max_age_seconds=200))
    young_enough_decision = await _run(pipeline, young_enough)
    assert young_enough_decision.layer is Layer.EXACT
    assert young_enough_decision.served is not None
    assert young_enough_decision.served.age_seconds == 100

    too_old = _context(CacheControl(max_age_seconds=50))
    decided = await _run(pipeline, too_old)
    assert (decided.layer, decided.reason) == (
        Layer.MISS,
        Reason.OLDER_THAN_MAX_AGE,
    )
    assert provider.calls == 2
    # The fresh answer replaced the old entry: the same request is now served.
    again = _context(CacheControl(max_age_seconds=50))
    again_decision = await _run(pipeline, again)
    assert again_decision.layer is Layer.EXACT and provider.calls == 2


async def test_a_policy_may_ignore_max_age() -> None:
    provider, cache = ScriptedProvider(), MemoryExactCache()
    pipeline = ChatPipeline(provider, ExactCacheStage(cache))
    await _run(pipeline, _context(CacheControl()))
    (key,) = cache.entries
    entry = cache.entries[key]
    await cache.put(
        key, CachedCompletion(entry.completion, "acme", "m", time.time() - 100), ttl_seconds=3600
    )
    ignoring = _context(
        CacheControl(max_age_seconds=50), {"cache_control": {"honour_max_age": False}}
    )
    ignoring_decision = await _run(pipeline, ignoring)
    assert ignoring_decision.layer is Layer.EXACT and provider.calls == 1


@pytest.mark.parametrize(
    ("requested", "policy", "stored_for"),
    [
        (None, {}, 86400),  # no header: the layer's own TTL
        (60, {}, 60),  # shorter: as asked
        (10**6, {}, 86400),  # longer than the policy: the policy's TTL
        (10**6, {"cache_control": {"max_ttl_seconds": 604800}}, 604800),
        (3600, {"cache_control": {"max_ttl_seconds": 604800}}, 3600),
        (60, {"cache_control": {"honour_ttl_header": False}}, 86400),
        (60, {"exact_cache": {"ttl_seconds": 30}}, 30),
    ],
)
async def test_the_requested_ttl_is_bounded_by_the_policy(
    requested: int | None, policy: dict[str, Any], stored_for: int
) -> None:
    cache = TtlRecordingCache()
    pipeline = ChatPipeline(ScriptedProvider(), ExactCacheStage(cache))
    ctx = _context(CacheControl(ttl_seconds=requested), policy)
    await _run(pipeline, ctx)
    assert cache.ttls == [stored_for]


def test_each_layer_bounds_by_its_own_ttl() -> None:
    policy = {"exact_cache": {"ttl_seconds": 30}, "semantic_cache": {"ttl_seconds": 120}}
    ctx = _context(CacheControl(ttl_seconds=10**6), policy)
    assert entry_ttl_seconds(ctx, ctx.policy.exact_cache.ttl_seconds) == 30
    assert entry_ttl_seconds(ctx, ctx.policy.semantic_cache.ttl_seconds) == 120


def test_max_ttl_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Policy.model_validate({"cache_control": {"max_ttl_seconds": 0}})
