"""Request bodies of the memory lifecycle API: a new version (`PATCH`) and the rows of
an import (the shape `GET /v1/memories/export` writes)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gateway.api.memory_schemas import MAX_CONTENT_CHARS, MAX_KEY_CHARS, MemoryIn, checked_time
from gateway.memory.records import MemoryKind, MemoryRecord, iso, parse_time

# Exported ids are restored as they are: the gateway's own shape, or one a client chose.
MEMORY_ID_PATTERN = r"^[A-Za-z0-9_\-]{1,128}$"
MAX_IMPORT_ROWS = 10_000


class _StrictBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class MemoryPatchIn(_StrictBody):
    """What changes in the new version; every field left out is the old version's, and
    the result is validated like a new memory (`MemoryIn`). null clears a field."""

    content: str | None = Field(default=None, min_length=1, max_length=MAX_CONTENT_CHARS)
    source: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    kind: MemoryKind | None = None
    key: str | None = None
    entity: str | None = None
    occurred_at: str | None = None


def revised_memory_in(old: MemoryRecord, patch: MemoryPatchIn) -> MemoryIn:
    """The old version's fields with the patch's applied, validated as a new memory
    (raises pydantic's `ValidationError`)."""
    merged: dict[str, Any] = {
        "content": old.content,
        "source": old.source,
        "tags": list(old.tags),
        "metadata": old.metadata,
        "valid_from": iso(old.valid_from),
        "valid_to": iso(old.valid_to),
        "kind": old.kind,
        "key": old.key,
        "entity": old.entity,
        "occurred_at": iso(old.occurred_at),
    }
    for name in patch.model_fields_set:
        merged[name] = getattr(patch, name)
    merged["source"] = merged["source"] or ""
    merged["tags"] = merged["tags"] or []
    merged["metadata"] = merged["metadata"] or {}
    return MemoryIn.model_validate({k: v for k, v in merged.items() if v is not None})


class MemoryExportRow(_StrictBody):
    """One exported memory (`MemoryRecord.to_api`); `user` and `object` are accepted
    and ignored: an import belongs to the user it is made for."""

    id: str = Field(pattern=MEMORY_ID_PATTERN)
    object: Literal["memory"] | None = None
    user: str | None = None
    namespace: str | None = Field(default=None, max_length=256)
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    source: str = Field(default="", max_length=128)
    tags: list[str] = Field(default_factory=list, max_length=32)
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: str
    valid_from: str | None = None
    valid_to: str | None = None
    last_access_at: str | None = None
    access_count: int = Field(default=0, ge=0)
    quarantined: bool = False
    quarantine_reason: str | None = Field(default=None, max_length=256)
    kind: MemoryKind = "semantic"
    key: str | None = Field(default=None, max_length=MAX_KEY_CHARS)
    entity: str | None = Field(default=None, max_length=MAX_KEY_CHARS)
    occurred_at: str | None = None
    supersedes: str | None = Field(default=None, pattern=MEMORY_ID_PATTERN)
    superseded_by: str | None = Field(default=None, pattern=MEMORY_ID_PATTERN)

    @field_validator("created_at", "valid_from", "valid_to", "last_access_at", "occurred_at")
    @classmethod
    def _iso_time(cls, value: str | None) -> str | None:
        return checked_time(value)

    def to_record(self, tenant: str, user: str) -> MemoryRecord:
        def when(value: str | None) -> float | None:
            return None if value is None else parse_time(value)

        quarantine = (self.quarantine_reason or "imported") if self.quarantined else None
        return MemoryRecord(
            id=self.id,
            tenant=tenant,
            user=user,
            namespace=self.namespace or "",
            content=self.content,
            source=self.source,
            tags=tuple(self.tags),
            metadata=self.metadata,
            created_at=parse_time(self.created_at),
            valid_from=when(self.valid_from),
            valid_to=when(self.valid_to),
            last_access_at=when(self.last_access_at),
            access_count=self.access_count,
            quarantine=quarantine,
            kind=self.kind,
            key=self.key,
            entity=self.entity,
            occurred_at=when(self.occurred_at),
            supersedes=self.supersedes,
            superseded_by=self.superseded_by,
        )
