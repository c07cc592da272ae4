"""Storage protocols every cache backend implements (embedded now, Redis later)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class CachedCompletion:
    """A stored `chat.completion` object and what it was stored for."""

    completion: dict[str, Any]
    tenant: str
    model: str
    created_at: float


class ExactCache(Protocol):
    async def get(self, key: str) -> CachedCompletion | None: ...

    async def put(self, key: str, entry: CachedCompletion, ttl_seconds: int) -> None: ...

    async def ping(self) -> bool: ...

    async def close(self) -> None: ...
