"""The two memory stores the gateway needs, as protocols; embedded and Redis
implementations live in `embedded_store.py` and `redis_store.py`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from gateway.cache.limits import StoreLimits
from gateway.memory.records import MemoryRecord, MemoryScope


@dataclass(frozen=True, slots=True)
class MemoryPage:
    records: list[MemoryRecord]
    has_more: bool


@dataclass(frozen=True, slots=True)
class SessionItem:
    """One knowledge item held by a session: what it said and how well it scored when
    it was admitted."""

    key: str  # `dedup_key(content)`
    content: str
    score: float
    memory_id: str
    created_at: float  # the memory's, so the injected line can carry its date
    admitted_at: float


@dataclass(frozen=True, slots=True)
class UserQuota:
    """At most this much stored per (tenant, user), quarantined memories included."""

    max_memories: int
    max_bytes: int  # `MemoryRecord.size_bytes`, summed


@dataclass(frozen=True, slots=True)
class IdempotentWrite:
    """Record `answer` under `key` (per tenant and user) in the same step as the write,
    so a write that happened is always found by its retry, even if its answer was lost
    (a 503 after the store applied it)."""

    key: str
    fingerprint: str  # what was asked: a retry must ask the same
    answer: bytes
    ttl_seconds: int


@dataclass(frozen=True, slots=True)
class RecordedAnswer:
    fingerprint: str
    answer: bytes


QuotaScope = Literal["user", "tenant", "all"]


class QuotaExceeded(Exception):
    """The write would take the user (or the tenant, or the whole store) past a cap;
    nothing was stored."""

    def __init__(
        self,
        limit: Literal["count", "bytes"],
        used: int,
        adding: int,
        cap: int,
        scope: QuotaScope = "user",
    ) -> None:
        super().__init__(f"{scope} {limit} cap {cap} reached")
        self.limit = limit
        self.used = used
        self.adding = adding
        self.cap = cap
        self.scope = scope


class AlreadyWritten(Exception):
    """The idempotency key was recorded by an earlier write; nothing new was stored."""

    def __init__(self, recorded: RecordedAnswer) -> None:
        super().__init__("idempotency key already used")
        self.recorded = recorded


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


class MemoryStore(Protocol):
    async def add(
        self,
        records: Sequence[MemoryRecord],
        *,
        quota: UserQuota | None = None,
        idempotent: IdempotentWrite | None = None,
    ) -> None:
        """All or nothing. With `quota` or `idempotent`, every record must belong to one
        tenant and user; raises `QuotaExceeded` or `AlreadyWritten` (nothing stored)."""
        ...

    async def recorded_answer(self, tenant: str, user: str, key: str) -> RecordedAnswer | None:
        """What an earlier write with this idempotency key answered, until its TTL."""
        ...

    async def usage(self, tenant: str, user: str) -> tuple[int, int]:
        """(memories, bytes) the user has stored."""
        ...

    async def get(self, tenant: str, memory_id: str) -> MemoryRecord | None: ...

    async def delete(self, tenant: str, memory_id: str) -> bool: ...

    async def existing(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        """Which of `memory_ids` are still stored (not deleted)."""
        ...

    async def list_page(
        self,
        tenant: str,
        user: str | None,
        namespace: str | None,
        tag: str | None,
        limit: int,
        offset: int,
    ) -> MemoryPage:
        """Newest first. `user=None` lists the whole tenant (admin keys only)."""
        ...

    async def in_scope(self, scope: MemoryScope) -> list[MemoryRecord]:
        """Every record of the scope, with vectors: what retrieval ranks."""
        ...

    async def scope_version(self, tenant: str, user: str) -> str:
        """Changes whenever a memory of the user is added or deleted (not on touch):
        lets readers keep a prepared copy of the scope until it changes."""
        ...

    async def touch(self, tenant: str, memory_ids: Sequence[str], at: float) -> None:
        """Count an access (injected or returned by search) and stamp its time."""
        ...

    async def ping(self) -> bool: ...

    async def close(self) -> None: ...


class SessionStore(Protocol):
    """The per-session knowledge cache; a session expires `ttl_seconds` after its last
    write."""

    async def load(self, tenant: str, user: str, session: str) -> list[SessionItem]: ...

    async def save(
        self, tenant: str, user: str, session: str, items: Sequence[SessionItem], ttl_seconds: int
    ) -> None: ...

    async def forget(self, tenant: str, user: str, memory_ids: Sequence[str]) -> None:
        """Remove the items copied from `memory_ids` from every session of the user:
        a deleted memory must not live on in a session cache."""
        ...

    async def close(self) -> None: ...
