"""Caps on memory writes, checked the same way by both backends before anything is
stored."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.cache.limits import StoreLimits
from gateway.memory.records import MemoryRecord
from gateway.storage.protocols import QuotaExceeded, UserQuota


def totals(records: Sequence[MemoryRecord]) -> tuple[int, int]:
    return len(records), sum(record.size_bytes for record in records)


def one_owner(records: Sequence[MemoryRecord]) -> tuple[str, str]:
    owners = {(record.tenant, record.user) for record in records}
    if len(owners) != 1:
        raise ValueError("a capped or idempotent write must belong to one tenant and user")
    return owners.pop()


def check_quota(quota: UserQuota | None, used: tuple[int, int], adding: tuple[int, int]) -> None:
    """Raise `QuotaExceeded` if adding (memories, bytes) to `used` passes a cap."""
    if quota is None:
        return
    if used[0] + adding[0] > quota.max_memories:
        raise QuotaExceeded("count", used[0], adding[0], quota.max_memories)
    if used[1] + adding[1] > quota.max_bytes:
        raise QuotaExceeded("bytes", used[1], adding[1], quota.max_bytes)


def check_store_caps(
    caps: StoreLimits | None,
    tenant_used: tuple[int, int],
    all_used: tuple[int, int],
    adding: tuple[int, int],
) -> None:
    """Raise `QuotaExceeded` if adding (memories, bytes) passes the tenant's or the
    store's `capacity.memories` cap: memories are refused there, never evicted."""
    if caps is None:
        return
    if caps.max_entries_per_tenant is not None and (
        tenant_used[0] + adding[0] > caps.max_entries_per_tenant
    ):
        raise QuotaExceeded(
            "count", tenant_used[0], adding[0], caps.max_entries_per_tenant, "tenant"
        )
    if caps.max_bytes_per_tenant is not None and (
        tenant_used[1] + adding[1] > caps.max_bytes_per_tenant
    ):
        raise QuotaExceeded("bytes", tenant_used[1], adding[1], caps.max_bytes_per_tenant, "tenant")
    if all_used[0] + adding[0] > caps.max_entries:
        raise QuotaExceeded("count", all_used[0], adding[0], caps.max_entries, "all")
    if all_used[1] + adding[1] > caps.max_bytes:
        raise QuotaExceeded("bytes", all_used[1], adding[1], caps.max_bytes, "all")
