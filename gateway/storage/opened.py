"""What an opened storage backend hands the app: its stores behind the protocols, and
the few operations the app runs on the backend as a whole."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from gateway.cache.eviction import CapacityLedger
from gateway.storage.admin_protocols import AuditStore, KeyStore, SpendStore
from gateway.storage.agent_protocols import KnowledgeStore, TaskStore, ToolCacheStore
from gateway.storage.protocols import (
    AdaptiveCounterStore,
    ExactCache,
    Lock,
    MemoryStore,
    ResponseStore,
    SessionStore,
    VectorIndex,
)
from gateway.storage.rate_limiting import RateLimiter


@dataclass(frozen=True, slots=True)
class FlightStores:
    """What single flight coordinates replicas through: the shared lease and the exact
    cache where a leader's answer lands. Both None on a one-process backend, where
    followers wait on the leader's in-process future and need neither."""

    lock: Lock | None = None
    exact: ExactCache | None = None


@dataclass(frozen=True, slots=True)
class Storage:
    backend: str
    exact: ExactCache
    vectors: VectorIndex
    flight: FlightStores
    memories: MemoryStore
    sessions: SessionStore
    describe: Callable[[], Awaitable[dict[str, Any]]]  # for /readyz
    close: Callable[[], Awaitable[None]]
    # Deletes expired entries (the background sweep); returns how many went.
    sweep: Callable[[], Awaitable[int]]
    # Entries, bytes and evictions of the capped stores (on Redis: the shared totals as
    # of this process's last write or sweep, and the evictions this process made).
    ledger: CapacityLedger
    # The adaptive operating point's counters (embedded: SQLite; Redis: shared).
    adaptive: AdaptiveCounterStore
    # The Responses API's stored responses (per tenant, with a TTL).
    responses: ResponseStore
    # Task state (`/v1/tasks`, `x-gateway-task`).
    tasks: TaskStore
    # The agents' tool-result cache (per tenant, TTL per entry, capped).
    tool_cache: ToolCacheStore
    # The tenant knowledge base (`/v1/knowledge`).
    knowledge: KnowledgeStore
    # API keys issued at run time (`/admin/keys`), stored hashed.
    keys: KeyStore
    # The audit trail of admin actions (`/admin/audit`).
    audit: AuditStore
    # Spend per (UTC day, tenant, key, model) (embedded: SQLite; Redis: shared).
    spend: SpendStore
    # Rate limit buckets (embedded: this process; Redis: shared by the replicas).
    rate_limiter: RateLimiter
