"""What the capped stores hold and what they dropped: read by `/metrics` and
`/admin/stats`.

Stores update it from their worker threads while scrapes read it from the event loop,
hence the lock."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from gateway.cache.limits import CapacitySettings, StoreLimits


class EvictionReason(StrEnum):
    CAPACITY = "capacity"  # the store's global cap
    TENANT_CAPACITY = "tenant_capacity"  # the tenant's own cap
    EXPIRED = "expired"  # past its TTL, removed by the sweep


@dataclass(frozen=True, slots=True)
class StoreUsage:
    entries: int
    bytes: int


class CapacityLedger:
    """Per store: evictions by reason, and current entries and bytes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._evictions: dict[tuple[str, str], int] = {}
        self._usage: dict[str, StoreUsage] = {}

    def evicted(self, store: str, reason: EvictionReason, entries: int) -> None:
        if entries <= 0:
            return
        with self._lock:
            key = (store, reason.value)
            self._evictions[key] = self._evictions.get(key, 0) + entries

    def set_usage(self, store: str, entries: int, size_bytes: int) -> None:
        with self._lock:
            self._usage[store] = StoreUsage(entries, size_bytes)

    def evictions(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._evictions)

    def usage(self) -> dict[str, StoreUsage]:
        with self._lock:
            return dict(self._usage)


def capacity_snapshot(ledger: CapacityLedger, settings: CapacitySettings) -> dict[str, Any]:
    """`/admin/stats`' `capacity`: per store, what it holds, its caps and what it evicted
    (on Redis: the shared totals as of this process's last write or sweep, and this
    process's evictions; a store nothing was written to yet reports no usage)."""
    limits: dict[str, StoreLimits] = {
        "exact": settings.exact_cache,
        "semantic": settings.semantic_index,
        "sessions": settings.sessions,
        "tool_cache": settings.tool_cache,
    }
    usage = ledger.usage()
    evictions = ledger.evictions()
    stores: dict[str, Any] = {}
    for store, caps in limits.items():
        used = usage.get(store)
        stores[store] = {
            "entries": None if used is None else used.entries,
            "bytes": None if used is None else used.bytes,
            "limits": caps.model_dump(),
            "evictions": {
                reason.value: evictions.get((store, reason.value), 0) for reason in EvictionReason
            },
        }
    return {
        "stores": stores,
        # Refused past, never evicted: no usage or evictions to report here.
        "memory_limits": settings.memories.model_dump(),
        "max_namespaces_per_tenant": settings.max_namespaces_per_tenant,
        "sweep_interval_seconds": settings.sweep_interval_seconds,
    }
