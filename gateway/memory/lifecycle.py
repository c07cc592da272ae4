"""The memory lifecycle beyond add and search: new versions (`PATCH`), delete by filter,
the retention clean-up, and export / import of one user's memories. Stateless: built
around the app's `MemoryService` where it is needed."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from gateway.memory.guard import inspect_memory_content
from gateway.memory.records import MemoryRecord, MemoryScope
from gateway.memory.retention import retention_victims
from gateway.memory.service import MemoryRejected, MemoryService, NewMemory
from gateway.policy.memory import MemoryPolicy
from gateway.storage.protocols import RecordFilter, SupersedeConflict, UserQuota


@dataclass(frozen=True, slots=True)
class ImportResult:
    imported: int
    skipped: int  # already stored (same id): an import run twice stores nothing twice


class MemoryLifecycle:
    def __init__(self, service: MemoryService, clock: Callable[[], float] = time.time) -> None:
        self._service = service
        self._store = service.store
        self._clock = clock

    async def revise(
        self, old: MemoryRecord, item: NewMemory, policy: MemoryPolicy
    ) -> MemoryRecord:
        """`item` stored as the new version of `old` (guard-scanned like an add), which
        it supersedes; raises `SupersedeConflict` when `old` was superseded already."""
        if old.superseded_by is not None:
            raise SupersedeConflict(old.id, old.superseded_by)
        scope = MemoryScope(old.tenant, old.user, old.namespace)
        (record,) = await self._service.add(scope, [replace(item, supersedes=old.id)], policy)
        return record

    async def delete_where(self, scope: MemoryScope, matches: RecordFilter) -> int:
        """Delete the scope's memories that match (superseded versions included)."""
        records = await self._store.in_scope(scope)
        return await self._delete(scope.tenant, [r.id for r in records if matches(r)])

    async def _delete(self, tenant: str, memory_ids: Sequence[str]) -> int:
        deleted = 0
        for memory_id in memory_ids:
            deleted += await self._service.delete(tenant, memory_id)
        return deleted

    async def cleanup(
        self,
        policy_for: Callable[[str], MemoryPolicy],
        tenant: str | None = None,
        user: str | None = None,
    ) -> int:
        """Apply each tenant's `memory.retention` to its users (or one tenant, or one
        user); returns how many memories went. Users of a tenant whose policy keeps
        everything are not even read."""
        now = self._clock()
        deleted = 0
        for owner_tenant, owner_user in await self._store.owners():
            if tenant is not None and owner_tenant != tenant:
                continue
            if user is not None and owner_user != user:
                continue
            retention = policy_for(owner_tenant).retention
            if not retention.limited:
                continue
            records = await self._store.in_scope(MemoryScope(owner_tenant, owner_user))
            deleted += await self._delete(owner_tenant, retention_victims(records, retention, now))
        return deleted

    async def export(self, scope: MemoryScope) -> list[MemoryRecord]:
        """Every memory of the scope, superseded and quarantined ones too, oldest first."""
        records = await self._store.in_scope(scope)
        return sorted(records, key=lambda record: (record.created_at, record.id))

    async def restore(
        self, scope: MemoryScope, records: Sequence[MemoryRecord], policy: MemoryPolicy
    ) -> ImportResult:
        """Store exported records as they were (ids, kinds, times, supersession) for the
        scope's user; ids already stored are skipped. Content not quarantined in the
        export is guard-scanned like an add (raises `MemoryRejected`, nothing stored)."""
        stored = await self._store.existing(scope.tenant, [record.id for record in records])
        fresh: list[MemoryRecord] = []
        for index, record in enumerate(records):
            if record.id in stored:
                continue
            stored.add(record.id)  # a repeated id in the same import counts once
            owned = replace(record, tenant=scope.tenant, user=scope.user)
            if owned.quarantine is None:
                verdict = inspect_memory_content(owned.content)
                if verdict is not None:
                    if policy.write_guard == "reject":
                        raise MemoryRejected(index, verdict)
                    owned = replace(owned, quarantine=f"{verdict.kind}:{verdict.rule}")
            fresh.append(owned)
        if fresh:
            limits = policy.limits
            quota = UserQuota(limits.max_memories_per_user, limits.max_bytes_per_user)
            await self._store.add(await self._service.embed_records(fresh), quota=quota)
        return ImportResult(imported=len(fresh), skipped=len(records) - len(fresh))


def sweep_with_cleanup(
    sweep: Callable[[], Awaitable[int]],
    lifecycle: MemoryLifecycle,
    policy_for: Callable[[str], MemoryPolicy],
    any_retention: Callable[[], bool],
) -> Callable[[], Awaitable[int]]:
    """The background sweep, then the memory retention clean-up: what both removed.
    The clean-up is skipped while no policy sets a retention rule (the default): it
    would list every user of the store (on Redis a SCAN) to delete nothing."""

    async def _sweep() -> int:
        removed = await sweep()
        if any_retention():
            removed += await lifecycle.cleanup(policy_for)
        return removed

    return _sweep
