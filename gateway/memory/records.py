"""What a long-term memory is, and who it belongs to."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt
import orjson

Vector = npt.NDArray[np.float32]

# episodic: events (`occurred_at`); semantic: stable facts and preferences (exact read by
# `key` and `entity`); temporal: facts that hold between `valid_from` and `valid_to`;
# procedural: rules and instructions, injected first and never ranked.
MemoryKind = Literal["episodic", "semantic", "temporal", "procedural"]
MEMORY_KINDS: tuple[MemoryKind, ...] = get_args(MemoryKind)
DEFAULT_KIND: MemoryKind = "semantic"


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
    """One stored fact. ADD-only: a newer version is a new record that `supersedes` the
    old one, which keeps its text for audit with `superseded_by` set and is no longer
    retrieved or listed by default. Times are epoch seconds."""

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
    kind: MemoryKind = DEFAULT_KIND
    key: str | None = None  # e.g. `user.preferred_language`: one current fact per key
    entity: str | None = None  # who or what the fact is about (exact read)
    occurred_at: float | None = None  # when an episodic event happened
    supersedes: str | None = None  # the id of the version this one replaced
    superseded_by: str | None = None  # set once a newer version replaced this one

    @property
    def current(self) -> bool:
        return self.superseded_by is None

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
            **self._lifecycle_fields(iso),
        }

    def _lifecycle_fields(self, time: Any) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "entity": self.entity,
            "occurred_at": time(self.occurred_at),
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
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
            **self._lifecycle_fields(lambda value: value),
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
            kind=_kind(value.get("kind")),
            key=value.get("key") or None,
            entity=value.get("entity") or None,
            occurred_at=_optional_float(value.get("occurred_at")),
            supersedes=value.get("supersedes") or None,
            superseded_by=value.get("superseded_by") or None,
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


def _kind(value: Any) -> MemoryKind:
    """A stored kind; records from before kinds existed are semantic."""
    for kind in MEMORY_KINDS:
        if value == kind:
            return kind
    return DEFAULT_KIND
