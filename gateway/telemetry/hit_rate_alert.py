"""The hit-rate-drop alert: a tenant's cache hit rate fell by `points` percentage
points within `window_minutes`. The usual cause is a namespace, policy version or
system-prompt version that did not follow a release, so nothing stored matches.

Per tenant, per minute: cacheable requests (exact, semantic, miss; bypassed ones say
nothing about the cache) and hits. The rate now is that of the last `recent_minutes`;
the reference is the best rate of any `recent_minutes` span earlier in the window. Each
side needs `min_requests`. It clears once the fall is under half the points. Per
process, like the other rolling statistics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway.telemetry.alert_settings import HitRateDropAlert
from gateway.telemetry.records import DecisionRecord

logger = logging.getLogger("gateway.alerts")

_CACHEABLE = frozenset({"exact", "semantic", "miss"})
_HITS = frozenset({"exact", "semantic"})
_MINUTE_SECONDS = 60


@dataclass(frozen=True, slots=True)
class HitRateDrop:
    tenant: str
    firing: bool
    drop_points: float  # reference rate - recent rate, in percentage points (0 if unknown)
    recent_rate: float | None
    reference_rate: float | None


class HitRateDropMonitor:
    def __init__(self, settings: HitRateDropAlert, clock: Callable[[], float] = time.time) -> None:
        self._settings = settings
        self._clock = clock
        # tenant -> minute -> [requests, hits]
        self._minutes: dict[str, dict[int, list[int]]] = {}
        self._firing: set[str] = set()
        # tenant -> (minute now, best earlier rate): the reference spans end before the
        # recent span, so within one minute only a record dated into them changes it.
        # Every record is checked; recomputing ~20 spans each time cost ~80 µs a request.
        self._references: dict[str, tuple[int, float | None]] = {}

    def add(self, record: DecisionRecord) -> None:
        if not self._settings.enabled or record.layer not in _CACHEABLE:
            return
        minute = int(record.at // _MINUTE_SECONDS)
        minutes = self._minutes.setdefault(record.tenant, {})
        counts = minutes.get(minute)
        if counts is None:
            counts = minutes[minute] = [0, 0]
            # Only a new minute moves the window: older ones fall out of it here.
            self._prune(record.tenant, minute)
        counts[0] += 1
        counts[1] += int(record.layer in _HITS)
        self._forget_reference(record.tenant, minute)
        self.check(record.tenant)

    def _forget_reference(self, tenant: str, minute: int) -> None:
        """Drop the remembered reference when `minute` is one it was computed from (a
        record dated into an earlier span, a late one) or lies past it (the pruning
        for a minute ahead of the clock may have removed some of its minutes)."""
        known = self._references.get(tenant)
        if known is None:
            return
        now = known[0]
        if minute > now or minute <= now - self._settings.recent_minutes:
            del self._references[tenant]

    def _prune(self, tenant: str, minute: int) -> None:
        minutes = self._minutes[tenant]
        oldest = minute - self._settings.window_minutes + 1
        for old in [m for m in minutes if m < oldest]:
            del minutes[old]

    def _rate(self, minutes: dict[int, list[int]], first: int, last: int) -> float | None:
        requests = hits = 0
        for minute in range(first, last + 1):
            counts = minutes.get(minute)
            if counts is not None:
                requests += counts[0]
                hits += counts[1]
        return hits / requests if requests >= self._settings.min_requests else None

    def evaluate(self, tenant: str) -> HitRateDrop:
        settings = self._settings
        minutes = self._minutes.get(tenant, {})
        now = int(self._clock() // _MINUTE_SECONDS)
        span = settings.recent_minutes
        recent = self._rate(minutes, now - span + 1, now)
        reference = self._reference(tenant, minutes, now)
        drop = 0.0
        if recent is not None and reference is not None:
            drop = max(0.0, (reference - recent) * 100)
        # Once firing it stays so until the fall is under half the points: a rate
        # hovering at the line would otherwise fire and clear with every request.
        needed = settings.points / 2 if tenant in self._firing else settings.points
        firing = settings.enabled and recent is not None and drop >= needed
        return HitRateDrop(tenant, firing, round(drop, 2), recent, reference)

    def _reference(self, tenant: str, minutes: dict[int, list[int]], now: int) -> float | None:
        """The best rate of any `recent_minutes` span in the window before the recent one."""
        known = self._references.get(tenant)
        if known is not None and known[0] == now:
            return known[1]
        span = self._settings.recent_minutes
        reference: float | None = None
        first = now - self._settings.window_minutes + 1
        for start in range(first, now - 2 * span + 2):
            rate = self._rate(minutes, start, start + span - 1)
            if rate is not None and (reference is None or rate > reference):
                reference = rate
        self._references[tenant] = (now, reference)
        return reference

    def check(self, tenant: str) -> HitRateDrop:
        state = self.evaluate(tenant)
        if state.firing and tenant not in self._firing:
            self._firing.add(tenant)
            logger.warning(
                "hit rate of tenant %s fell %.1f points within %d minutes (%.1f%% -> %.1f%%); "
                "check that cache namespaces and policy versions followed the last release",
                tenant,
                state.drop_points,
                self._settings.window_minutes,
                (state.reference_rate or 0) * 100,
                (state.recent_rate or 0) * 100,
            )
        elif not state.firing:
            self._firing.discard(tenant)
        return state

    def states(self) -> list[HitRateDrop]:
        return [self.check(tenant) for tenant in sorted(self._minutes)]
