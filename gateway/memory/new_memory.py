"""What a memory write is made of: the items as a client asks to store them, an
idempotent write's key, and the guard's refusal."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.errors import GatewayInternalError
from gateway.memory.guard import GuardVerdict
from gateway.memory.records import MemoryKind, MemoryRecord


@dataclass(frozen=True, slots=True)
class NewMemory:
    """A memory as a client asks to store it (already validated)."""

    content: str
    source: str = ""
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float | None = None  # None: now
    valid_from: float | None = None
    valid_to: float | None = None
    kind: MemoryKind | None = None  # None: inferred (`versions.infer_kind`)
    key: str | None = None  # None: from the rules for semantic statements
    entity: str | None = None
    occurred_at: float | None = None
    supersedes: str | None = None  # an id of the scope this write replaces
    supersede: bool = True  # false: keep same-key memories current too


@dataclass(frozen=True, slots=True)
class WriteOnce:
    """An `Idempotency-Key` write: `render` turns the stored records into the answer
    that a retry with the same key gets back instead of a second copy."""

    key: str
    fingerprint: str
    render: Callable[[Sequence[MemoryRecord]], bytes]


class MemoryRejected(GatewayInternalError):
    """A memory failed the write guard and the policy says reject."""

    def __init__(self, index: int, verdict: GuardVerdict) -> None:
        super().__init__(verdict.message)
        self.index = index
        self.verdict = verdict
