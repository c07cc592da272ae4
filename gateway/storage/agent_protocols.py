"""The store protocols of the agent-memory APIs: task state (`/v1/tasks`), the
tool-result cache (`/v1/tool-cache`) and the tenant knowledge base (`/v1/knowledge`).
The caches', memory's and the other stores' protocols are in `protocols.py`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from gateway.knowledge.records import KnowledgeRecord, KnowledgeScope
from gateway.tasks.records import TaskRecord, TaskStatus
from gateway.toolcache.records import ToolCacheEntry, ToolCacheFilter

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


# The tenant knowledge base.


@dataclass(frozen=True, slots=True)
class KnowledgePage:
    records: list[KnowledgeRecord]
    has_more: bool


class KnowledgeStore(Protocol):
    """Knowledge items per tenant. `version(tenant)` changes with every add and delete
    of the tenant's items, by any replica: readers keep a prepared index of a scope
    until it changes, and a deleted item is never ranked (or carried by a session)
    once its delete returned."""

    async def add(
        self, records: Sequence[KnowledgeRecord], *, max_items: int, replaces: str | None = None
    ) -> None:
        """All or nothing; every record of one tenant. With `replaces` (a document id),
        that document's items are deleted in the same transaction: readers see the old
        items or the new ones, never both or neither. Raises `QuotaExceeded` (scope
        "tenant", limit "count") when the tenant would hold more than `max_items`."""
        ...

    async def get(self, tenant: str, item_id: str) -> KnowledgeRecord | None: ...

    async def delete(self, tenant: str, item_id: str) -> bool: ...

    async def delete_document(self, tenant: str, document_id: str) -> list[str]:
        """Delete every item of the document; returns their ids."""
        ...

    async def list_page(
        self,
        tenant: str,
        namespace: str | None,
        document_id: str | None,
        limit: int,
        offset: int,
    ) -> KnowledgePage:
        """Newest first, then by document and chunk; `namespace` None: all of them."""
        ...

    async def in_scope(self, scope: KnowledgeScope) -> list[KnowledgeRecord]:
        """Every item the scope sees, with vectors: what retrieval ranks."""
        ...

    async def version(self, tenant: str) -> str: ...

    async def count(self, tenant: str) -> int: ...

    async def close(self) -> None: ...
