"""Request bodies of the knowledge API. Strict, like the memory API's: an unknown or
mistyped field is a 400 that names it."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# A document is chunked; the request size limit (`server.max_request_bytes`) bounds it
# too.
MAX_DOCUMENT_CHARS = 1_000_000
MAX_ITEM_CHARS = 8000
MAX_BATCH_ITEMS = 100
_MAX_METADATA_BYTES = 8192
# Client-chosen document ids: printable, no spaces, so they sit in a query string as is.
_DOCUMENT_ID = r"^[A-Za-z0-9._:\-]{1,128}$"


class _StrictBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _small_metadata(value: dict[str, Any]) -> dict[str, Any]:
    try:
        encoded = orjson.dumps(value)
    except TypeError:  # an integer beyond 64 bits
        raise ValueError("integers must fit in 64 bits") from None
    if len(encoded) > _MAX_METADATA_BYTES:
        raise ValueError(f"must serialise to at most {_MAX_METADATA_BYTES} bytes")
    return value


class KnowledgeItemIn(_StrictBody):
    content: str = Field(min_length=1, max_length=MAX_ITEM_CHARS)
    title: str = Field(default="", max_length=256)
    source: str = Field(default="", max_length=128)
    metadata: dict[str, Any] = Field(default_factory=dict)

    _content = field_validator("content")(_not_blank)
    _metadata = field_validator("metadata")(_small_metadata)


class KnowledgeWriteIn(_StrictBody):
    """A document (`content`, chunked) or `items` (stored as given), not both."""

    namespace: str | None = Field(default=None, min_length=1, max_length=256)
    document_id: str | None = Field(default=None, pattern=_DOCUMENT_ID)
    content: str | None = Field(default=None, min_length=1, max_length=MAX_DOCUMENT_CHARS)
    items: list[KnowledgeItemIn] | None = Field(default=None, min_length=1, max_length=100)
    title: str = Field(default="", max_length=256)
    source: str = Field(default="", max_length=128)
    metadata: dict[str, Any] = Field(default_factory=dict)

    _metadata = field_validator("metadata")(_small_metadata)

    @field_validator("content")
    @classmethod
    def _document_not_blank(cls, value: str | None) -> str | None:
        return None if value is None else _not_blank(value)

    @model_validator(mode="after")
    def _one_kind(self) -> KnowledgeWriteIn:
        if (self.content is None) == (self.items is None):
            raise ValueError("give either 'content' (a document) or 'items', not both")
        if self.items is not None and (self.title or self.source or self.metadata):
            raise ValueError("'title', 'source' and 'metadata' go on each item of 'items'")
        return self


class KnowledgeSearchIn(_StrictBody):
    namespace: str | None = Field(default=None, min_length=1, max_length=256)
    query: str = Field(min_length=1, max_length=MAX_ITEM_CHARS)
    top_k: int = Field(default=10, ge=1, le=100)
