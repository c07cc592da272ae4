"""How much the caches may hold: the `capacity:` block of the gateway config.

Every store that grows with traffic (the exact cache, the semantic index, the session
knowledge cache) has a global cap and an optional per-tenant cap, each in entries and
in bytes. Past a cap the least recently used entries go first (LRU; see the README for
the measurement behind the choice). Expired entries are swept in the background.

Memories are user data and are never evicted: past their caps (`memories`) a write is
refused (409 `memory_limit_reached`), next to the policy's per-user caps.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

_MiB = 1024 * 1024


class StoreLimits(BaseModel):
    """Caps of one store. `None` per tenant: only the global cap applies."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_entries: int = Field(default=100_000, ge=1)
    max_bytes: int = Field(default=1024 * _MiB, ge=1024)
    max_entries_per_tenant: int | None = Field(default=None, ge=1)
    max_bytes_per_tenant: int | None = Field(default=None, ge=1024)

    @model_validator(mode="after")
    def _tenant_caps_within_global(self) -> StoreLimits:
        if (
            self.max_entries_per_tenant is not None
            and self.max_entries_per_tenant > self.max_entries
        ):
            raise ValueError("max_entries_per_tenant cannot exceed max_entries")
        if self.max_bytes_per_tenant is not None and self.max_bytes_per_tenant > self.max_bytes:
            raise ValueError("max_bytes_per_tenant cannot exceed max_bytes")
        return self

    def tenant_entries(self) -> int:
        return (
            self.max_entries if self.max_entries_per_tenant is None else self.max_entries_per_tenant
        )

    def tenant_bytes(self) -> int:
        return self.max_bytes if self.max_bytes_per_tenant is None else self.max_bytes_per_tenant


def _semantic_default() -> StoreLimits:
    # Vectors live in memory (2 KiB each at 512 dimensions): a smaller default.
    return StoreLimits(max_entries=100_000, max_bytes=512 * _MiB)


def _sessions_default() -> StoreLimits:
    return StoreLimits(max_entries=100_000, max_bytes=256 * _MiB)


def _tool_cache_default() -> StoreLimits:
    return StoreLimits(max_entries=100_000, max_bytes=256 * _MiB)


def _memories_default() -> StoreLimits:
    return StoreLimits(max_entries=1_000_000, max_bytes=4096 * _MiB)


class CapacitySettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    exact_cache: StoreLimits = Field(default_factory=StoreLimits)
    semantic_index: StoreLimits = Field(default_factory=_semantic_default)
    sessions: StoreLimits = Field(default_factory=_sessions_default)
    # The agents' tool-result cache (`/v1/tool-cache`): capped and evicted like the
    # stores above.
    tool_cache: StoreLimits = Field(default_factory=_tool_cache_default)
    # Caps that refuse writes instead of evicting (memories are user data).
    memories: StoreLimits = Field(default_factory=_memories_default)
    # Distinct `x-gateway-namespace` values one tenant may use at a time (per gateway
    # process). A request naming one more is served by the provider and not cached
    # (`bypass`, reason `namespace_limit`) until a namespace has been idle for
    # `namespace_idle_seconds`.
    max_namespaces_per_tenant: int = Field(default=1000, ge=1)
    namespace_idle_seconds: float = Field(default=86_400.0, gt=0)
    # How often expired entries are deleted from the embedded stores' files and the
    # in-process index (Redis expires its keys itself).
    sweep_interval_seconds: float = Field(default=60.0, gt=0, le=86_400)
