"""Knowledge operations shared by the HTTP API and the memory stage: write (chunking,
the write guard, embedding), delete, and scoped search. Holds, per process, a prepared
index of each recently used scope, rebuilt when the tenant's knowledge version changes
(any add or delete, by any replica): one cheap version read per turn."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.bounded_lru import BoundedLRU
from gateway.embed.protocol import Embedder
from gateway.errors import GatewayInternalError
from gateway.knowledge.chunking import Counter, chunk_document
from gateway.knowledge.records import (
    KnowledgeRecord,
    KnowledgeScope,
    item_size_bytes,
    new_document_id,
    new_knowledge_id,
)
from gateway.memory.guard import GuardVerdict, inspect_memory_content
from gateway.memory.ranked import ranked_once_per_text
from gateway.memory.records import Vector
from gateway.memory.retrieval import ScopeIndex, ScoredMemory, TermCache, rank
from gateway.memory.search_memo import SearchMemo
from gateway.memory.service import INDEX_IN_THREAD_ABOVE_RECORDS
from gateway.policy.knowledge import KnowledgePolicy
from gateway.policy.memory import MemoryRankingPolicy
from gateway.storage.agent_protocols import KnowledgeStore


@dataclass(frozen=True, slots=True)
class NewKnowledge:
    """An item as a client asks to store it (already validated)."""

    content: str
    title: str = ""
    source: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class KnowledgeBatch:
    """One write: a document (`text`, chunked) or items stored as given."""

    scope: KnowledgeScope
    items: Sequence[NewKnowledge] = ()
    text: str | None = None
    title: str = ""
    source: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    # Given: the write replaces that document's items (in one store transaction).
    document_id: str | None = None


class KnowledgeRejected(GatewayInternalError):
    """An item failed the write guard and the policy says reject; nothing stored."""

    def __init__(self, index: int, verdict: GuardVerdict) -> None:
        super().__init__(verdict.message)
        self.index = index
        self.verdict = verdict


class KnowledgeItemTooLarge(GatewayInternalError):
    def __init__(self, index: int, size_bytes: int, cap_bytes: int) -> None:
        super().__init__(f"item {index} takes {size_bytes} bytes; the cap is {cap_bytes}")
        self.index = index
        self.size_bytes = size_bytes
        self.cap_bytes = cap_bytes


@dataclass(frozen=True, slots=True)
class _CachedScope:
    version: str
    index: ScopeIndex
    records: dict[str, KnowledgeRecord]  # by id, as stored (title, document, chunk)
    searches: SearchMemo  # of `index` only: a new version starts a new memo


class KnowledgeService:
    def __init__(
        self,
        store: KnowledgeStore,
        embedder: Embedder,
        chunk_counter: Counter,
        clock: Callable[[], float] = time.time,
        *,
        max_cached_scopes: int = 1024,
        memo_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self._memo_clock = memo_clock
        self._embedder = embedder
        self._counter = chunk_counter
        self._clock = clock
        self._scopes: BoundedLRU[KnowledgeScope, _CachedScope] = BoundedLRU(max_cached_scopes)
        self._terms = TermCache()

    async def scope_index(self, scope: KnowledgeScope) -> ScopeIndex:
        """The scope's items, prepared for ranking; rebuilt when the tenant's version
        changed, so an item deleted anywhere is gone from the next read on."""
        version = await self.store.version(scope.tenant)
        cached = self._scopes.get(scope)
        if cached is not None and cached.version == version:
            return cached.index
        stored = await self.store.in_scope(scope)
        records = [record.as_memory() for record in stored]
        # As for memories: a large scope is indexed off the event loop.
        if len(records) > INDEX_IN_THREAD_ABOVE_RECORDS:
            index = await asyncio.to_thread(
                ScopeIndex.build, records, self._embedder.name, self._terms
            )
        else:
            index = ScopeIndex.build(records, self._embedder.name, self._terms)
        self._scopes.put(
            scope,
            _CachedScope(
                version, index, {r.id: r for r in stored}, SearchMemo(clock=self._memo_clock)
            ),
        )
        return index

    def cached_records(self, scope: KnowledgeScope) -> dict[str, KnowledgeRecord]:
        """The stored records behind the scope's last prepared index, by id."""
        cached = self._scopes.get(scope)
        return {} if cached is None else cached.records

    def records_for(self, batch: KnowledgeBatch, policy: KnowledgePolicy) -> list[KnowledgeRecord]:
        """The batch as records (a document chunked), checked against the per-item cap
        and the write guard; nothing stored yet."""
        now = self._clock()
        document_id = batch.document_id or new_document_id()
        if batch.text is not None:
            chunking = policy.chunking
            texts = chunk_document(
                batch.text, self._counter, chunking.max_tokens, chunking.overlap_tokens
            )
            items = [NewKnowledge(t, batch.title, batch.source, batch.metadata) for t in texts]
        else:
            items = list(batch.items)
        records: list[KnowledgeRecord] = []
        for position, item in enumerate(items):
            size = item_size_bytes(item.content, item.title, item.source, item.metadata)
            if size > policy.limits.max_bytes_per_item:
                raise KnowledgeItemTooLarge(position, size, policy.limits.max_bytes_per_item)
            verdict = inspect_memory_content(item.content)
            if verdict is not None and policy.write_guard == "reject":
                raise KnowledgeRejected(position, verdict)
            records.append(
                KnowledgeRecord(
                    id=new_knowledge_id(),
                    tenant=batch.scope.tenant,
                    content=item.content,
                    created_at=now,
                    # Items added as given are each their own document, unless the
                    # client named one for them all.
                    document_id=document_id
                    if batch.text is not None or batch.document_id
                    else new_document_id(),
                    chunk=position if batch.text is not None or batch.document_id else 0,
                    namespace=batch.scope.namespace or "",
                    title=item.title,
                    source=item.source,
                    metadata=item.metadata,
                    quarantine=None if verdict is None else f"{verdict.kind}:{verdict.rule}",
                )
            )
        return records

    async def add(self, batch: KnowledgeBatch, policy: KnowledgePolicy) -> list[KnowledgeRecord]:
        """Chunk, guard, embed and store the batch: all of it or nothing. Raises
        `KnowledgeRejected`, `KnowledgeItemTooLarge`, or `QuotaExceeded` (the tenant's
        item cap)."""
        records = self.records_for(batch, policy)
        # Quarantined content is never embedded: it must not be found by meaning either.
        to_embed = [i for i, record in enumerate(records) if record.quarantine is None]
        if to_embed:
            vectors = await self._embedder.embed([records[i].content for i in to_embed])
            for row, i in enumerate(to_embed):
                records[i] = records[i].with_vector(vectors[row], self._embedder.name)
        await self.store.add(
            records,
            max_items=policy.limits.max_items_per_tenant,
            replaces=batch.document_id,
        )
        return records

    def memoised(
        self,
        scope: KnowledgeScope,
        query: str,
        top_k: int,
        ranking: MemoryRankingPolicy,
        index: ScopeIndex,
    ) -> list[ScoredMemory] | None:
        """What `search` returned for the same question over `index` (the scope's
        index read this turn) in the last minute; None when there is no such result."""
        searches = self._searches_of(scope, index)
        return None if searches is None else searches.get((query, top_k, ranking))

    async def search(
        self,
        scope: KnowledgeScope,
        query: str,
        top_k: int,
        ranking: MemoryRankingPolicy,
        query_vector: Vector | None,
        index: ScopeIndex | None = None,
    ) -> list[ScoredMemory]:
        """Best first, at most `top_k`, ranked exactly like memories (same scale, so the
        two merge by score); one result per distinct text."""
        if index is None:
            index = await self.scope_index(scope)
        if index.size == 0 or not query.strip():
            return []
        ranking_call = functools.partial(
            rank,
            index,
            query,
            query_vector,
            self._clock(),
            ranking,
            top_k=top_k * 2,
            distinct=top_k,
        )
        results = await ranked_once_per_text(ranking_call, index, query_vector, top_k)
        searches = self._searches_of(scope, index)
        if searches is not None and query_vector is not None:
            searches.put((query, top_k, ranking), results)
        return results

    def _searches_of(self, scope: KnowledgeScope, index: ScopeIndex) -> SearchMemo | None:
        cached = self._scopes.get(scope)
        # Only the memo of that very index: another one ranks other items.
        return cached.searches if cached is not None and cached.index is index else None
