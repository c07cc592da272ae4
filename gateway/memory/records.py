"""What a long-term memory is, and who it belongs to."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """Whose memories: always one tenant and one user; a namespace narrows further.

    Every store read takes a scope, so retrieval is scoped before it searches: nothing
    of another tenant or user is ever loaded, let alone ranked.
    """

    tenant: str
    user: str
    namespace: str | None = None  # None: every namespace of the user


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One stored fact. ADD-only: a newer fact about the same thing is a new record;
    ranking prefers the one valid now and the more recent one. Times are epoch seconds."""

    id: str
    tenant: str
    user: str
    content: str
    created_at: float
    namespace: str = ""
    source: str = ""
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    valid_from: float | None = None  # when the fact starts to hold in the world
    valid_to: float | None = None  # when it stops holding (exclusive)
    last_access_at: float | None = None
    access_count: int = 0
    # The rule that quarantined it (write guard, policy `quarantine`); never injected.
    quarantine: str | None = None
    # Embedding of `content` by `embedder` (unit vector); not part of the API.
    vector: Vector | None = field(default=None, compare=False, repr=False)
    embedder: str = ""

    @property
    def size_bytes(self) -> int:
        return stored_size_bytes(self.content, self.source, self.tags, self.metadata)

    def with_vector(self, vector: Vector, embedder: str) -> MemoryRecord:
        return replace(self, vector=vector, embedder=embedder)

    def to_api(self) -> dict[str, Any]:
        """The public shape (`/v1/memories`): times as ISO-8601 UTC."""
        return {
            "id": self.id,
            "object": "memory",
            "user": self.user,
            "namespace": self.namespace or None,
            "content": self.content,
            "source": self.source,
            "tags": list(self.tags),
            "metadata": self.metadata,
            "created_at": iso(self.created_at),
            "valid_from": iso(self.valid_from),
            "valid_to": iso(self.valid_to),
            "last_access_at": iso(self.last_access_at),
            "access_count": self.access_count,
            "quarantined": self.quarantine is not None,
            "quarantine_reason": self.quarantine,
        }

    def to_storage(self) -> dict[str, Any]:
        """Everything but the vector, as JSON-compatible values (epoch seconds)."""
        return {
            "id": self.id,
            "tenant": self.tenant,
            "user": self.user,
            "namespace": self.namespace,
            "content": self.content,
            "source": self.source,
            "tags": list(self.tags),
            "metadata": self.metadata,
            "created_at": self.created_at,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "last_access_at": self.last_access_at,
            "access_count": self.access_count,
            "quarantine": self.quarantine,
            "embedder": self.embedder,
        }

    @classmethod
    def from_storage(cls, value: dict[str, Any], vector: Vector | None = None) -> MemoryRecord:
        return cls(
            id=str(value["id"]),
            tenant=str(value["tenant"]),
            user=str(value["user"]),
            namespace=str(value.get("namespace") or ""),
            content=str(value["content"]),
            source=str(value.get("source") or ""),
            tags=tuple(str(tag) for tag in value.get("tags") or ()),
            metadata=dict(value.get("metadata") or {}),
            created_at=float(value["created_at"]),
            valid_from=_optional_float(value.get("valid_from")),
            valid_to=_optional_float(value.get("valid_to")),
            last_access_at=_optional_float(value.get("last_access_at")),
            access_count=int(value.get("access_count") or 0),
            quarantine=value.get("quarantine") or None,
            vector=vector,
            embedder=str(value.get("embedder") or ""),
        )


def stored_size_bytes(
    content: str, source: str, tags: Sequence[str], metadata: dict[str, Any]
) -> int:
    """What counts against a user's byte cap: the UTF-8 bytes of what the client wrote
    (content, source, tags, metadata as JSON); not the vector or the counters."""
    return (
        len(content.encode())
        + len(source.encode())
        + sum(len(tag.encode()) for tag in tags)
        + (len(orjson.dumps(metadata)) if metadata else 0)
    )


def new_memory_id() -> str:
    return f"mem_{uuid.uuid4().hex}"


def iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat().replace("+00:00", "Z")


def parse_time(value: str) -> float:
    """ISO-8601 (date or date-time; no zone means UTC) -> epoch seconds."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)
