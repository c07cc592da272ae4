"""`auth.runtime_keys`: how the keys issued through `/admin/keys` are resolved."""

from __future__ import annotations

from pydantic import Field

from gateway.strict_model import StrictModel


class RuntimeKeySettings(StrictModel):
    # How often a process asks the key store whether any key changed (a version counter
    # bumped by every create, rotate and revoke): the bound on how long another replica
    # may still accept a revoked key. The process that made the change forgets at once.
    check_interval_seconds: float = Field(default=0.25, gt=0, le=1.0)
    # Remembered keys (digest -> key) and remembered unknown digests, each bounded
    # separately so that a flood of wrong keys cannot push out the real ones.
    cache_entries: int = Field(default=10_000, ge=1, le=1_000_000)
    unknown_cache_entries: int = Field(default=10_000, ge=1, le=1_000_000)
