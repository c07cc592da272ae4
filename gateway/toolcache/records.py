"""What the tool-result cache stores and how a delete names what to remove."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ToolCacheEntry:
    """One stored tool result: `result` is its JSON, as stored (never logged)."""

    key: str  # `tool_cache_key(...)`
    tenant: str
    namespace: str
    tool: str
    method: str
    target: str
    result: bytes
    stored_at: float
    expires_at: float

    @property
    def size_bytes(self) -> int:
        """What the entry counts against the caps: its result and identifying fields."""
        return (
            len(self.result)
            + len(self.key)
            + sum(
                len(part.encode()) for part in (self.namespace, self.tool, self.method, self.target)
            )
        )


@dataclass(frozen=True, slots=True)
class ToolCacheFilter:
    """The entries of one tenant a delete removes: every field given must match (None:
    any); `target_prefix` matches targets that start with it."""

    tenant: str
    namespace: str | None = None
    tool: str | None = None
    method: str | None = None
    target_prefix: str | None = None

    def matches(self, entry: ToolCacheEntry) -> bool:
        return (
            entry.tenant == self.tenant
            and (self.namespace is None or entry.namespace == self.namespace)
            and (self.tool is None or entry.tool == self.tool)
            and (self.method is None or entry.method == self.method)
            and (self.target_prefix is None or entry.target.startswith(self.target_prefix))
        )
