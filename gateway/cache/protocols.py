"""Storage protocols every cache backend implements (embedded now, Redis later)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from gateway.cache.purge import PurgeFilter


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
