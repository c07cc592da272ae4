"""Every store protocol the gateway uses, the records they exchange, and the one
internal store error.

Two backends implement them: `storage/embedded/` (SQLite files and in-process indexes,
one process) and `storage/redis/` (shared by replicas). Each backend translates its own
failures (sqlite3 and OS errors, Redis connection errors and timeouts) into
`StoreUnavailable`, so nothing above `storage/` sees a backend's exception types; the
HTTP layer answers it with `errors.StoreUnavailableResponse` (503).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from gateway.cache.purge import PurgeFilter
from gateway.errors import GatewayInternalError
from gateway.memory.records import MemoryRecord, MemoryScope

# Rate limits' protocol and records are in their own module (this one is at its size
# limit); importing them from here works like for every other store.
from gateway.storage.rate_limiting import BucketState as BucketState
from gateway.storage.rate_limiting import RateBucket as RateBucket
from gateway.storage.rate_limiting import RateLimiter as RateLimiter
from gateway.storage.rate_limiting import RateVerdict as RateVerdict
from gateway.tasks.records import TaskRecord, TaskStatus
from gateway.toolcache.records import ToolCacheEntry, ToolCacheFilter

Vector = npt.NDArray[np.float32]
# scope -> field -> value (the adaptive counters)
Counters = dict[str, dict[str, float]]


class StoreUnavailable(GatewayInternalError, RuntimeError):
    """The store cannot be used now (unreachable, timed out, closed, locked or out of
    disk); the caller fails open (a cache miss, forwarding without memory) or closed
    (a 503) as its policy says."""


# The exact cache (L1).


@dataclass(frozen=True, slots=True)
class CachedCompletion:
    """A stored `chat.completion` object and what it was stored for."""

    completion: dict[str, Any]
    tenant: str
    model: str
    created_at: float
    # What the entry was stored under (policy and declared versions, the request's
    # namespace): for purges.
    namespace: dict[str, str] = field(default_factory=dict)


class ExactCache(Protocol):
    async def get(self, key: str) -> CachedCompletion | None: ...

    async def put(self, key: str, entry: CachedCompletion, ttl_seconds: int) -> None: ...

    async def purge(self, purge_filter: PurgeFilter) -> int:
        """Remove the matching entries; returns how many."""
        ...

    async def ping(self) -> bool: ...

    async def close(self) -> None: ...


# The semantic index (L2).


@dataclass(frozen=True, slots=True)
class SemanticEntry:
    """A stored completion and the query it answered."""

    entry_id: str
    tenant: str
    model: str
    fingerprint: str
    query_text: str
    completion: dict[str, Any]
    created_at: float
    expires_at: float
    policy_version: str = ""
    namespace: dict[str, str] = field(default_factory=dict)  # for purges


class VectorIndex(Protocol):
    async def add(self, entry: SemanticEntry, vector: Vector) -> None: ...

    async def search(
        self, fingerprint: str, vector: Vector, top_k: int
    ) -> list[tuple[SemanticEntry, float]]:
        """Raw cosine, best first; only unexpired entries of that fingerprint."""
        ...

    async def count(self) -> int: ...

    def touch(self, entry_id: str) -> None:
        """The entry was served: it becomes the most recently used (for eviction)."""
        ...

    async def purge(self, purge_filter: PurgeFilter) -> int: ...

    async def ping(self) -> bool: ...

    async def close(self) -> None: ...


# Single-flight leases.


class Lock(Protocol):
    async def acquire(self, key: str, ttl_seconds: float) -> str | None:
        """A token when acquired; None when someone else holds `key`."""
        ...

    async def release(self, key: str, token: str) -> bool:
        """True when this token held `key` and it is now released."""
        ...


# Memory and sessions.


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


class QuotaExceeded(GatewayInternalError):
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


class AlreadyWritten(GatewayInternalError):
    """The idempotency key was recorded by an earlier write; nothing new was stored."""

    def __init__(self, recorded: RecordedAnswer) -> None:
        super().__init__("idempotency key already used")
        self.recorded = recorded


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


# The adaptive operating point's counters.


class AdaptiveCounterStore(Protocol):
    async def add(self, deltas: Counters) -> None:
        """Add every delta to its counter (created at 0). All or nothing per call."""
        ...

    async def load(self) -> Counters:
        """Every counter of every scope."""
        ...

    async def close(self) -> None: ...


# The Responses API's stored responses (`store: true`).


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """A Responses `response` object as it was returned, with the input items it
    answered (the whole conversation: a `previous_response_id` chain's items are
    prepended), so a follow-up can continue it."""

    response: dict[str, Any]
    input_items: list[dict[str, Any]]
    created_at: float


class ResponseStore(Protocol):
    """Stored responses by (tenant, response id): another tenant's id is not found."""

    async def put(
        self, tenant: str, response_id: str, stored: StoredResponse, ttl_seconds: int
    ) -> None: ...

    async def get(self, tenant: str, response_id: str) -> StoredResponse | None:
        """None when absent, expired, or another tenant's."""
        ...

    async def delete(self, tenant: str, response_id: str) -> bool:
        """Whether there was one to delete."""
        ...

    async def close(self) -> None: ...


# Task state (`/v1/tasks`): exact records per (tenant, user, task id).

# `created`; `exists`: the id is taken (nothing written); `limit`: the user already has
# the most tasks the policy allows (nothing written).
TaskCreated = Literal["created", "exists", "limit"]


class TaskStore(Protocol):
    """Tasks by (tenant, user, task id): another user's or tenant's id is not found.
    Never evicted: a task lives until it is deleted (archived ones included)."""

    async def get(self, tenant: str, user: str, task_id: str) -> TaskRecord | None: ...

    async def create(self, record: TaskRecord, max_tasks_per_user: int) -> TaskCreated: ...

    async def replace(self, record: TaskRecord, expected_revision: int) -> bool:
        """Write `record` only if the stored one still has `expected_revision`; False
        (nothing written) when it changed or is gone."""
        ...

    async def delete(self, tenant: str, user: str, task_id: str) -> bool: ...

    async def list(
        self, tenant: str, user: str, status: TaskStatus | None = None
    ) -> list[TaskRecord]:
        """The user's tasks, most recently updated first (at most the per-user cap)."""
        ...


# The tool-result cache for agents.


class ToolCacheStore(Protocol):
    """Tool results by (tenant, key), each with its own expiry; capped like the
    response caches (`capacity.tool_cache`, least recently used first)."""

    async def get(self, tenant: str, key: str) -> ToolCacheEntry | None:
        """None when absent, expired, or another tenant's; a hit counts as a use."""
        ...

    async def put(self, entry: ToolCacheEntry) -> None:
        """Stored until `entry.expires_at`, replacing the key's earlier result."""
        ...

    async def delete(self, tool_filter: ToolCacheFilter) -> int:
        """Remove the tenant's entries that match; returns how many."""
        ...

    async def close(self) -> None: ...
