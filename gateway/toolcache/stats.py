"""Counts of the tool-result cache's lookups, puts and deletes, per tenant: this
process's, for `/admin/stats` (`tool_cache`) and the `gateway_tool_cache_*` metrics."""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from typing import Any

from gateway.telemetry.metrics import GatewayMetrics


class LookupOutcome(StrEnum):
    HIT = "hit"
    MISS = "miss"  # nothing stored under the key (or it expired)
    STALE = "stale"  # stored, but older than the lookup's max age
    ERROR = "error"  # the store failed: answered as a miss


class PutOutcome(StrEnum):
    STORED = "stored"
    REFUSED_ERROR = "refused_error"  # an error result: never cached
    REFUSED_TOO_LARGE = "refused_too_large"


class ToolCacheStats:
    def __init__(self) -> None:
        self._lookups: Counter[tuple[str, str]] = Counter()
        self._puts: Counter[tuple[str, str]] = Counter()
        self._deleted: Counter[str] = Counter()

    def lookup(self, tenant: str, outcome: LookupOutcome) -> None:
        self._lookups[(tenant, outcome.value)] += 1

    def put(self, tenant: str, outcome: PutOutcome) -> None:
        self._puts[(tenant, outcome.value)] += 1

    def deleted(self, tenant: str, entries: int) -> None:
        self._deleted[tenant] += entries

    def snapshot(self) -> dict[str, Any]:
        """Totals, the hit rate of lookups, and the same per tenant."""
        tenants = sorted(
            {t for t, _ in self._lookups} | {t for t, _ in self._puts} | set(self._deleted)
        )
        return {
            **self._row(None),
            "by_tenant": {tenant: self._row(tenant) for tenant in tenants},
        }

    def _row(self, tenant: str | None) -> dict[str, Any]:
        def total(counts: Counter[tuple[str, str]], outcome: str) -> int:
            return sum(n for (t, o), n in counts.items() if o == outcome and tenant in (None, t))

        lookups = {outcome.value: total(self._lookups, outcome.value) for outcome in LookupOutcome}
        asked = sum(lookups.values())
        return {
            "lookups": lookups,
            "hit_rate": round(lookups["hit"] / asked, 4) if asked else 0.0,
            "puts": {outcome.value: total(self._puts, outcome.value) for outcome in PutOutcome},
            "deleted": sum(n for t, n in self._deleted.items() if tenant in (None, t)),
        }

    def export(self, metrics: GatewayMetrics) -> None:
        """The `gateway_tool_cache_*` counters, read at each scrape."""
        metrics.counter_at_scrape(
            "gateway_tool_cache_lookups",
            "Tool-result cache lookups by tenant and outcome (hit, miss, stale, error).",
            ("tenant", "outcome"),
            lambda: [(key, float(n)) for key, n in self._lookups.items()],
        )
        metrics.counter_at_scrape(
            "gateway_tool_cache_puts",
            "Tool-result cache puts by tenant and outcome (stored, refused_error, "
            "refused_too_large).",
            ("tenant", "outcome"),
            lambda: [(key, float(n)) for key, n in self._puts.items()],
        )
        metrics.counter_at_scrape(
            "gateway_tool_cache_deleted",
            "Tool-result cache entries removed by DELETE /v1/tool-cache.",
            ("tenant",),
            lambda: [((tenant,), float(n)) for tenant, n in self._deleted.items()],
        )
