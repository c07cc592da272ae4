"""The two memory stores the gateway needs, as protocols; embedded and Redis
implementations live in `embedded_store.py` and `redis_store.py`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

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


class MemoryStore(Protocol):
    async def add(self, records: Sequence[MemoryRecord]) -> None: ...

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
