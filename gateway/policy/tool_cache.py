"""The policy block of the agents' tool-result cache (`tool_cache:` in a policy file)."""

from __future__ import annotations

from pydantic import Field, model_validator

from gateway.strict_model import StrictModel


class ToolCachePolicy(StrictModel):
    """The agents' tool-result cache (`/v1/tool-cache`; README, "Tool-result cache for
    agents"). Read from the tenant's policy (model "")."""

    enabled: bool = True
    # A put without `ttl_seconds` keeps its result this long; a put may ask for up to
    # `max_ttl_seconds` (more is refused with 400).
    default_ttl_seconds: int = Field(default=300, ge=1)
    max_ttl_seconds: int = Field(default=86_400, ge=1)
    # The largest result one entry may hold (its JSON, UTF-8); larger puts get 413.
    max_result_bytes: int = Field(default=1024 * 1024, ge=1, le=64 * 1024 * 1024)

    @model_validator(mode="after")
    def _default_within_max(self) -> ToolCachePolicy:
        if self.default_ttl_seconds > self.max_ttl_seconds:
            raise ValueError("default_ttl_seconds cannot exceed max_ttl_seconds")
        return self
