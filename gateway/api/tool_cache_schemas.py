"""Request bodies of `/v1/tool-cache` (see `gateway/api/tool_cache.py`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_NAME_CHARS = 256
MAX_TARGET_CHARS = 4096


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ToolCallIn(_Body):
    """What identifies a tool call: the key is built from these and the tenant."""

    tool: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    method: str = Field(default="", max_length=MAX_NAME_CHARS)
    # A URL, an index name, a host: what the tool acts on.
    target: str = Field(default="", max_length=MAX_TARGET_CHARS)
    arguments: Any = None
    schema_version: str = Field(default="", max_length=MAX_NAME_CHARS)
    # Or the `x-gateway-namespace` header (both given must agree).
    namespace: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS)


class LookupIn(ToolCallIn):
    # Serve only a result stored at most this many seconds ago (and `Cache-Control:
    # max-age=N`: the stricter of the two).
    max_age_seconds: float | None = Field(default=None, ge=0)


class PutIn(ToolCallIn):
    result: Any = Field(default=None)
    # Within the policy's `tool_cache.max_ttl_seconds`; unset: `default_ttl_seconds`.
    ttl_seconds: int | None = Field(default=None, ge=1)
    # The tool's own status (an HTTP status for HTTP tools): 400 or more is an error
    # and is never cached; so is `is_error: true`.
    status: int | None = Field(default=None, ge=100, le=599)
    is_error: bool = False

    @model_validator(mode="before")
    @classmethod
    def _result_given(cls, data: Any) -> Any:
        if isinstance(data, dict) and "result" not in data:
            raise ValueError("'result' is required (any JSON value; null is a result too)")
        return data


class DeleteIn(_Body):
    """Every field given must match; `all: true` deletes every entry of the tenant."""

    namespace: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS)
    tool: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS)
    method: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    target_prefix: str | None = Field(default=None, min_length=1, max_length=MAX_TARGET_CHARS)
    all: bool = False

    @model_validator(mode="after")
    def _one_filter_or_all(self) -> DeleteIn:
        filters = self.model_dump(exclude={"all"}, exclude_none=True)
        if not filters and not self.all:
            raise ValueError(
                "give at least one of namespace, tool, method, target_prefix, or 'all': true"
            )
        if filters and self.all:
            raise ValueError("'all' cannot be combined with filters")
        return self
