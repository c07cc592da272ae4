"""The in-process view of the adaptive statistics over an in-memory store: changes
count at once, a failed sync loses nothing and counts nothing twice, audits of served
hits tighten the threshold before any sync."""

from __future__ import annotations

from gateway.adaptive.serving import AdaptiveServing
from gateway.adaptive.stats import AdaptiveStats, Scope, scopes_of
from gateway.policy.models import SemanticCachePolicy
from gateway.storage.protocols import Counters
from gateway.testing.fakes import MemoryCounterStore

ADAPT = SemanticCachePolicy.model_validate({"adaptive": {"mode": "adapt", "floor": 0.8}})


async def test_a_failed_sync_keeps_the_changes_and_writes_them_once() -> None:
    store = MemoryCounterStore()
    stats = AdaptiveStats(store, sync_seconds=3600)
    scope = Scope("acme")
    stats.add_traffic([scope], 0.9)
    store.failure = ConnectionError("store down")
    await stats.sync()
    assert stats.sync_failures == 1
    assert sum(stats.view(scope).buckets.traffic) == 1.0  # still counted here
    store.failure = None
    await stats.sync()
    await stats.sync()
    assert sum(stats.view(scope).buckets.traffic) == 1.0
    assert sum(store.counters[scope.encode()].values()) == 1.0


async def test_evidence_moves_the_threshold_down_and_an_audited_false_hit_up_at_once() -> None:
    stats = AdaptiveStats(MemoryCounterStore(), sync_seconds=3600)
    serving = AdaptiveServing(stats)
    scopes = scopes_of("acme", "en", "m")
    assert serving.serving_threshold("acme", "en", "m", ADAPT) == ADAPT.accept_threshold
    for _ in range(300):
        stats.add_traffic(scopes, 0.85)
        stats.add_verdict(scopes, 0.85, 1.0)
    lowered = serving.serving_threshold("acme", "en", "m", ADAPT)
    assert lowered is not None and 0.8 <= lowered <= 0.85
    for _ in range(40):
        serving.audit_verdict("acme", "en", "m", 0.85, agrees=False)
    assert serving.serving_threshold("acme", "en", "m", ADAPT) == ADAPT.accept_threshold
    assert stats.view(Scope("acme")).tallies["audit_false"] == 40


async def test_observe_never_changes_the_threshold() -> None:
    stats = AdaptiveStats(MemoryCounterStore(), sync_seconds=3600)
    observe = SemanticCachePolicy()
    assert observe.adaptive.mode == "observe"
    scopes = scopes_of("acme", "en", "m")
    for _ in range(300):
        stats.add_traffic(scopes, 0.85)
        stats.add_verdict(scopes, 0.85, 1.0)
    assert AdaptiveServing(stats).serving_threshold("acme", "en", "m", observe) is None


async def test_a_language_decides_on_its_own_once_it_has_enough_verdicts() -> None:
    stats = AdaptiveStats(MemoryCounterStore(), sync_seconds=3600)
    zh = scopes_of("acme", "zh", "m")
    stats.add_verdict(zh, 0.9, 1.0)
    assert stats.deciding_scope(zh, 50) == Scope("acme")
    for _ in range(60):
        stats.add_verdict(zh, 0.9, 1.0)
    assert stats.deciding_scope(zh, 50) == Scope("acme", language="zh")


async def test_changes_stay_visible_while_a_sync_writes_them() -> None:
    store = MemoryCounterStore()
    stats = AdaptiveStats(store, sync_seconds=3600)
    scope = Scope("acme")
    stats.add_traffic([scope], 0.9)
    seen: list[float] = []
    original = store.add

    async def watching_add(deltas: Counters) -> None:
        seen.append(sum(stats.view(scope).buckets.traffic))
        await original(deltas)

    store.add = watching_add  # type: ignore[method-assign]
    await stats.sync()
    assert seen == [1.0]
    assert sum(stats.view(scope).buckets.traffic) == 1.0
