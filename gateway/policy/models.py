"""The policy schema: every knob an operator can set in `policies/*.yaml`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExactCachePolicy(_Strict):
    enabled: bool = True
    ttl_seconds: int = Field(default=24 * 3600, ge=1)


class Policy(_Strict):
    """Resolved policy for one request.

    `version`, `system_prompt_version` and `tool_schema_version` enter every cache key:
    bumping any of them makes older entries unreachable without purging them.
    """

    version: str = Field(default="1", min_length=1)
    system_prompt_version: str = ""
    tool_schema_version: str = ""
    exact_cache: ExactCachePolicy = Field(default_factory=ExactCachePolicy)
    # A response is stored only if every choice ended with one of these. `length`
    # (truncated) and `content_filter` never qualify.
    cacheable_finish_reasons: frozenset[str] = frozenset({"stop", "tool_calls"})

    def cache_namespace(self) -> dict[str, str]:
        return {
            "policy_version": self.version,
            "system_prompt_version": self.system_prompt_version,
            "tool_schema_version": self.tool_schema_version,
        }
