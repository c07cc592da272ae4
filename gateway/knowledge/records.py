"""What a knowledge item is and whose it is: one tenant, optionally one namespace."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from gateway.memory.records import MemoryRecord, Vector, iso, stored_size_bytes

# The `source` a knowledge item carries in the ranking and the session cache (memories
# carry `memory`): what the injected line is labelled with.
KNOWLEDGE_SOURCE = "knowledge"


@dataclass(frozen=True, slots=True)
class KnowledgeScope:
    """The items a request may see: the tenant's items without a namespace, plus, when
    the request names one, that namespace's items. Nothing of another tenant or another
    namespace is loaded."""

    tenant: str
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class KnowledgeRecord:
    """One stored item: a chunk of a document (`document_id`, `chunk`) or an item added
    as it was given (its own `document_id`, chunk 0). Times are epoch seconds."""

    id: str
    tenant: str
    content: str
    created_at: float
    document_id: str
    chunk: int = 0
    namespace: str = ""  # "": every namespace of the tenant
    title: str = ""
    source: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    # The write-guard rule that quarantined it (policy `quarantine`); never injected.
    quarantine: str | None = None
    vector: Vector | None = field(default=None, compare=False, repr=False)
    embedder: str = ""

    @property
    def size_bytes(self) -> int:
        return item_size_bytes(self.content, self.title, self.source, self.metadata)

    def with_vector(self, vector: Vector, embedder: str) -> KnowledgeRecord:
        return replace(self, vector=vector, embedder=embedder)

    def visible_in(self, scope: KnowledgeScope) -> bool:
        return self.tenant == scope.tenant and self.namespace in ("", scope.namespace or "")

    def as_memory(self) -> MemoryRecord:
        """The shape retrieval ranks (`ScopeIndex`): no user, never touched."""
        return MemoryRecord(
            id=self.id,
            tenant=self.tenant,
            user="",
            content=self.content,
            created_at=self.created_at,
            namespace=self.namespace,
            source=KNOWLEDGE_SOURCE,
            quarantine=self.quarantine,
            vector=self.vector,
            embedder=self.embedder,
        )

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "knowledge.item",
            "document_id": self.document_id,
            "chunk": self.chunk,
            "namespace": self.namespace or None,
            "title": self.title,
            "content": self.content,
            "source": self.source,
            "metadata": self.metadata,
            "created_at": iso(self.created_at),
            "quarantined": self.quarantine is not None,
            "quarantine_reason": self.quarantine,
        }

    def to_storage(self) -> dict[str, Any]:
        """Everything but the vector, as JSON-compatible values."""
        return {
            "id": self.id,
            "tenant": self.tenant,
            "content": self.content,
            "created_at": self.created_at,
            "document_id": self.document_id,
            "chunk": self.chunk,
            "namespace": self.namespace,
            "title": self.title,
            "source": self.source,
            "metadata": self.metadata,
            "quarantine": self.quarantine,
            "embedder": self.embedder,
        }

    @classmethod
    def from_storage(cls, value: dict[str, Any], vector: Vector | None = None) -> KnowledgeRecord:
        return cls(
            id=str(value["id"]),
            tenant=str(value["tenant"]),
            content=str(value["content"]),
            created_at=float(value["created_at"]),
            document_id=str(value["document_id"]),
            chunk=int(value.get("chunk") or 0),
            namespace=str(value.get("namespace") or ""),
            title=str(value.get("title") or ""),
            source=str(value.get("source") or ""),
            metadata=dict(value.get("metadata") or {}),
            quarantine=value.get("quarantine") or None,
            vector=vector,
            embedder=str(value.get("embedder") or ""),
        )


def item_size_bytes(content: str, title: str, source: str, metadata: dict[str, Any]) -> int:
    """What counts against `knowledge.limits.max_bytes_per_item`."""
    return stored_size_bytes(content, source, (title,) if title else (), metadata)


def new_knowledge_id() -> str:
    return f"kn_{uuid.uuid4().hex}"


def new_document_id() -> str:
    return f"doc_{uuid.uuid4().hex}"
