"""Request bodies of the memory API. Strict: an unknown or mistyped field is a 400
that names it, not a silently ignored typo in what a model will later be told."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gateway.memory.records import MemoryKind, iso, parse_time

MAX_CONTENT_CHARS = 8000
MAX_BATCH_ITEMS = 100
_MAX_METADATA_BYTES = 8192
MAX_KEY_CHARS = 256


class _StrictBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class MemoryIn(_StrictBody):
    user: str | None = Field(default=None, min_length=1, max_length=256)
    namespace: str | None = Field(default=None, min_length=1, max_length=256)
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    source: str = Field(default="", max_length=128)
    tags: list[str] = Field(default_factory=list, max_length=32)
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    # Kinds and versions (README, "Memory kinds and lifecycle").
    kind: MemoryKind | None = None
    key: str | None = Field(default=None, min_length=1, max_length=MAX_KEY_CHARS)
    entity: str | None = Field(default=None, min_length=1, max_length=MAX_KEY_CHARS)
    occurred_at: str | None = None
    supersedes: str | None = Field(default=None, min_length=1, max_length=MAX_KEY_CHARS)
    supersede: bool = True

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("tags")
    @classmethod
    def _short_tags(cls, value: list[str]) -> list[str]:
        if any(not tag or len(tag) > 64 for tag in value):
            raise ValueError("each tag must be 1-64 characters")
        return value

    @field_validator("metadata")
    @classmethod
    def _small_metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            encoded = orjson.dumps(value)
        except TypeError:  # an integer beyond 64 bits: not storable as JSON here
            raise ValueError("integers must fit in 64 bits") from None
        if len(encoded) > _MAX_METADATA_BYTES:
            raise ValueError(f"must serialise to at most {_MAX_METADATA_BYTES} bytes")
        return value

    @field_validator("created_at", "valid_from", "valid_to", "occurred_at")
    @classmethod
    def _iso_time(cls, value: str | None) -> str | None:
        return checked_time(value)

    @model_validator(mode="after")
    def _valid_window(self) -> MemoryIn:
        if (
            self.valid_from
            and self.valid_to
            and parse_time(self.valid_to) <= parse_time(self.valid_from)
        ):
            raise ValueError("valid_to must be later than valid_from")
        return self


def checked_time(value: str | None) -> str | None:
    if value is not None:
        try:
            # Also as UTC: '9999-12-31T23:59-14:00' parses but is in year 10000,
            # which could be stored but never shown again.
            iso(parse_time(value))
        except (ValueError, OverflowError, OSError):
            raise ValueError(
                "must be an ISO-8601 date or date-time within years 1-9999 in UTC"
            ) from None
    return value


class MemoryBatchIn(_StrictBody):
    """`{"items": [...]}`; `user`/`namespace` here apply to items that set none."""

    items: list[MemoryIn] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)
    user: str | None = Field(default=None, min_length=1, max_length=256)
    namespace: str | None = Field(default=None, min_length=1, max_length=256)


class MemorySearchIn(_StrictBody):
    user: str | None = Field(default=None, min_length=1, max_length=256)
    namespace: str | None = Field(default=None, min_length=1, max_length=256)
    query: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    top_k: int = Field(default=10, ge=1, le=100)
    # Rank as of this time instead of now: which temporal facts hold, and recency.
    as_of: str | None = None

    @field_validator("as_of")
    @classmethod
    def _iso_time(cls, value: str | None) -> str | None:
        return checked_time(value)
