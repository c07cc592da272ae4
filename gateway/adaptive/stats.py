"""The adaptive statistics of this process, kept in memory and synced with the store.

Every change (a candidate's traffic, a corrected verdict, a shadow tally) is added at
once to an in-process view, so the serving threshold tightens the moment an audit finds
a false hit, and queued as a delta; a background task writes the deltas to the store
(additions: replicas merge by addition) and reads everything back every
`sync_seconds`. The request path only reads the view: it never waits on the store. A
failed write keeps its deltas for the next one (nothing lost), and `close()` writes
what is left, so a restart finds every counter.

Scopes: the tenant; the tenant and the ask's language; the tenant and the model. The
threshold of a request comes from the most specific of its scopes that has at least
`min_scope_verdicts` verdicts ("where traffic allows"), else from the tenant's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from gateway.adaptive.buckets import DEFAULT_WIDTH, BucketStats, bucket_of
from gateway.adaptive.judge_error import JudgeErrorEstimate, JudgeErrors
from gateway.adaptive.threshold import (
    DEFAULT_PRIOR_STRENGTH,
    OperatingPoint,
    bucket_precision,
    choose_threshold,
)
from gateway.storage.protocols import AdaptiveCounterStore, Counters
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

# The buckets cover [STATS_FLOOR, 1]: below any floor a policy may set, so changing a
# policy's floor never changes the stored layout.
STATS_FLOOR = 0.5

TALLIES = (
    "shadow_judged",  # misses judged in the shadow
    "shadow_accepted",  # of those, judged servable (corrected): hits left on the table
    "left_tokens",  # tokens those answers cost upstream (what serving would have saved)
    "left_cost_usd",
    "judge_calls",
    "judge_tokens",
    "judge_cost_usd",
    "audit_verdicts",  # served semantic hits audited
    "audit_false",  # of those, found wrong
    "seed_verdicts",  # verdicts `gateway cache import --seed-adaptive` added
)


@dataclass(frozen=True, slots=True)
class Scope:
    tenant: str
    language: str = ""
    model: str = ""

    def encode(self) -> str:
        return orjson.dumps(["scope", self.tenant, self.language, self.model]).decode()


def _judge_scope(judge: str) -> str:
    return orjson.dumps(["judge", judge]).decode()


def scopes_of(tenant: str, language: str, model: str) -> tuple[Scope, ...]:
    """Most specific first; the tenant's own last."""
    return (Scope(tenant, language=language), Scope(tenant, model=model), Scope(tenant))


@dataclass(frozen=True, slots=True)
class ScopeView:
    scope: Scope
    buckets: BucketStats
    tallies: dict[str, float]


class AdaptiveStats:
    def __init__(self, store: AdaptiveCounterStore, sync_seconds: float = 2.0) -> None:
        self._store = store
        self._sync_seconds = sync_seconds
        self._base: Counters = {}  # as last read from the store
        self._pending: Counters = {}  # not yet written
        self._unconfirmed: list[Counters] = []  # written, not yet seen in a read
        self._views: dict[str, tuple[BucketStats, dict[str, float]]] = {}
        self._points: dict[tuple[str, float, float, float], OperatingPoint] = {}
        self._task: asyncio.Task[None] | None = None
        self._sync_lock = asyncio.Lock()
        self._failures = ThrottledLogger(logger, interval_seconds=60.0)
        self.sync_failures = 0

    # --- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        try:
            self._base = await self._store.load()
        except Exception as exc:  # fail open: start from nothing, keep trying
            self._sync_failed(exc)
        self._invalidate()
        self._task = asyncio.create_task(self._sync_loop(), name="adaptive-sync")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.sync()  # the storage, which owns the store, closes it afterwards

    async def _sync_loop(self) -> None:
        while True:
            await asyncio.sleep(self._sync_seconds)
            await self.sync()

    async def sync(self) -> None:
        """Write the queued deltas, then read everything back."""
        async with self._sync_lock:
            deltas, self._pending = self._pending, {}
            if deltas:
                # Visible in the view while the write is under way, and after it until a
                # read brings them back from the store.
                self._unconfirmed.append(deltas)
                try:
                    await self._store.add(deltas)
                except Exception as exc:
                    self._unconfirmed.remove(deltas)
                    _merge_into(self._pending, deltas)  # retried on the next sync
                    self._sync_failed(exc)
                    return
            try:
                loaded = await self._store.load()
            except Exception as exc:
                self._sync_failed(exc)
                return
            # The read started after the writes completed: it holds them.
            self._base, self._unconfirmed = loaded, []
            self._invalidate()

    def _sync_failed(self, exc: BaseException) -> None:
        self.sync_failures += 1
        self._failures.warning(
            "adaptive statistics sync failed (%s); kept in memory", type(exc).__name__
        )

    # --- changes (synchronous, in memory) --------------------------------------------------

    def _add(self, scope: str, field: str, value: float) -> None:
        if not value:
            return
        fields = self._pending.setdefault(scope, {})
        fields[field] = fields.get(field, 0.0) + value
        self._views.pop(scope, None)
        self._points.clear()

    def add_traffic(self, scopes: Iterable[Scope], similarity: float, weight: float = 1.0) -> None:
        index = bucket_of(similarity, STATS_FLOOR, DEFAULT_WIDTH)
        if index is None:
            return
        for scope in scopes:
            self._add(scope.encode(), f"traffic:{index}", weight)

    def add_verdict(self, scopes: Iterable[Scope], similarity: float, same: float) -> None:
        index = bucket_of(similarity, STATS_FLOOR, DEFAULT_WIDTH)
        if index is None:
            return
        same = min(1.0, max(0.0, same))
        for scope in scopes:
            key = scope.encode()
            self._add(key, f"judged:{index}", 1.0)
            self._add(key, f"same:{index}", same)

    def add_tally(self, scopes: Iterable[Scope], name: str, value: float) -> None:
        for scope in scopes:
            self._add(scope.encode(), name, value)

    def record_judge_truth(self, judge: str, truly_same: bool, says_same: bool) -> None:
        scope = _judge_scope(judge)
        if truly_same:
            self._add(scope, "same_seen", 1.0)
            self._add(scope, "same_missed", float(not says_same))
        else:
            self._add(scope, "different_seen", 1.0)
            self._add(scope, "different_accepted", float(says_same))

    # --- reads (the request path) ----------------------------------------------------------

    def _counters(self, scope: str) -> dict[str, float]:
        merged = dict(self._base.get(scope, {}))
        for layer in (*self._unconfirmed, self._pending):
            for name, value in layer.get(scope, {}).items():
                merged[name] = merged.get(name, 0.0) + value
        return merged

    def view(self, scope: Scope) -> ScopeView:
        key = scope.encode()
        cached = self._views.get(key)
        if cached is None:
            cached = _parse(self._counters(key))
            self._views[key] = cached
        return ScopeView(scope, cached[0], cached[1])

    def judge_estimate(self, judge: str) -> JudgeErrorEstimate:
        """The judge's verdicts on pairs of known truth: known same (exact repeats) and
        known different (`known_different`)."""
        counters = self._counters(_judge_scope(judge))
        return JudgeErrorEstimate(
            same_seen=int(counters.get("same_seen", 0)),
            same_missed=int(counters.get("same_missed", 0)),
            different_seen=int(counters.get("different_seen", 0)),
            different_accepted=int(counters.get("different_accepted", 0)),
        )

    def judge_errors(self, judge: str) -> JudgeErrors:
        return self.judge_estimate(judge).errors()

    def judge_truths(self, judge: str) -> dict[str, int]:
        counters = self._counters(_judge_scope(judge))
        return {name: int(value) for name, value in sorted(counters.items())}

    def prior_same(self, scope: Scope, similarity: float) -> float:
        """The bucket's current precision estimate (the prior a verdict corrects)."""
        buckets = self.view(scope).buckets
        index = bucket_of(similarity, buckets.floor, buckets.width)
        if index is None:
            return similarity
        return bucket_precision(buckets, index, DEFAULT_PRIOR_STRENGTH)[0]

    def deciding_scope(self, scopes: Iterable[Scope], min_verdicts: float) -> Scope:
        ordered = list(scopes)
        for scope in ordered[:-1]:
            if self.view(scope).buckets.total_judged() >= min_verdicts:
                return scope
        return ordered[-1]

    def operating_point(
        self, scope: Scope, target_precision: float, static_threshold: float, floor: float
    ) -> OperatingPoint:
        key = (scope.encode(), target_precision, static_threshold, floor)
        point = self._points.get(key)
        if point is None:
            point = choose_threshold(
                self.view(scope).buckets, target_precision, static_threshold, floor
            )
            self._points[key] = point
        return point

    def tenant_scopes(self) -> list[Scope]:
        """Every tenant-wide scope known here or in the store."""
        scopes = self._parsed_names("scope")
        return [Scope(parts[1]) for parts in scopes if not parts[2] and not parts[3]]

    def sub_scopes(self, tenant: str) -> list[Scope]:
        return [
            Scope(parts[1], parts[2], parts[3])
            for parts in self._parsed_names("scope")
            if parts[1] == tenant and (parts[2] or parts[3])
        ]

    def judges(self) -> list[str]:
        return sorted(parts[1] for parts in self._parsed_names("judge"))

    def _parsed_names(self, kind: str) -> list[list[Any]]:
        """The parsed counter-set names of `kind` ("scope", "judge") known here or in
        the store, in the order of their names."""
        names: set[str] = set(self._base)
        for layer in (*self._unconfirmed, self._pending):
            names.update(layer)
        parsed = (orjson.loads(name) for name in sorted(names))
        return [parts for parts in parsed if parts[0] == kind]

    def _invalidate(self) -> None:
        self._views.clear()
        self._points.clear()


def _parse(counters: dict[str, float]) -> tuple[BucketStats, dict[str, float]]:
    buckets = BucketStats(floor=STATS_FLOOR, width=DEFAULT_WIDTH)
    tallies = {name: 0.0 for name in TALLIES}
    series = {"traffic": buckets.traffic, "judged": buckets.judged, "same": buckets.judged_same}
    for name, value in counters.items():
        kind, _, index = name.partition(":")
        if kind in series and index.isdigit() and int(index) < buckets.size:
            series[kind][int(index)] += value
        elif name in tallies:
            tallies[name] += value
    return buckets, tallies


def _merge_into(target: Counters, deltas: Counters) -> None:
    for scope, fields in deltas.items():
        mine = target.setdefault(scope, {})
        for name, value in fields.items():
            mine[name] = mine.get(name, 0.0) + value
