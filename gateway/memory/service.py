"""Memory operations shared by the HTTP API and the chat pipeline: write (with the write
guard and embedding), search (scoped, ranked, deduplicated) and the per-turn session
merge. Holds no per-request state."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.embed.protocol import Embedder
from gateway.knowledge.records import KNOWLEDGE_SOURCE
from gateway.memory.access import AccessRecorder
from gateway.memory.guard import inspect_memory_content
from gateway.memory.new_memory import MemoryRejected as MemoryRejected
from gateway.memory.new_memory import NewMemory as NewMemory
from gateway.memory.new_memory import WriteOnce as WriteOnce
from gateway.memory.ranked import ranked_once_per_text
from gateway.memory.records import (
    MemoryRecord,
    MemoryScope,
    Vector,
    new_memory_id,
    stored_size_bytes,
)
from gateway.memory.relevance import RelevanceScorer
from gateway.memory.retrieval import RankMode, ScopeIndex, ScoredMemory, TermCache, rank
from gateway.memory.search_memo import SearchMemo, next_validity_change
from gateway.memory.session import SessionTurn, merge_turn
from gateway.memory.session_writes import SessionWrites
from gateway.memory.versions import infer_kind, plan_supersession, rule_key
from gateway.policy.memory import MemoryPolicy
from gateway.storage.protocols import (
    IdempotentWrite,
    MemoryStore,
    RecordedAnswer,
    SessionItem,
    SessionStore,
    SupersedeConflict,
    UserQuota,
)
from gateway.storage.quota import check_quota
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

# A scope larger than this is indexed, and ranked, in a worker thread: the event loop
# keeps serving other requests meanwhile (ranking is mostly numpy, which releases the
# GIL; see docs/measurements.md#memory-indexing-and-ranking-off-the-event-loop).
# Smaller scopes are done in place, cheaper than the thread hop.
INDEX_IN_THREAD_ABOVE_RECORDS = 500


# Attempts at a keyed write whose same-key versions another write superseded meanwhile.
_SUPERSEDE_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class _CachedScope:
    version: str
    built_at: float  # monotonic
    index: ScopeIndex
    searches: SearchMemo  # of `index` only: a rebuilt index starts a new memo


class MemoryService:
    """Holds, per process, prepared indexes of recently used scopes (bounded LRU): one
    cheap version read per request instead of loading and indexing a user's memories.
    A scope's index is rebuilt when its version changes (any add or delete, by any
    replica) and at the latest after `scope_max_age_seconds`, which bounds how stale
    the access counts used in ranking may be."""

    def __init__(
        self,
        store: MemoryStore,
        sessions: SessionStore,
        embedder: Embedder,
        clock: Callable[[], float] = time.time,
        *,
        max_cached_scopes: int = 1024,
        scope_max_age_seconds: float = 60.0,
        relevance_model: RelevanceScorer | None = None,  # None: the packaged model
    ) -> None:
        self.store = store
        # The memory stage's access counts, written after the response.
        self.access = AccessRecorder(store)
        self.sessions = sessions
        # The session caches' write-back, handed to the store without waiting for it.
        self.session_writes = SessionWrites()
        self._embedder = embedder
        self._clock = clock
        self._embed_failures = ThrottledLogger(logger, interval_seconds=60.0)
        self._scopes: OrderedDict[MemoryScope, _CachedScope] = OrderedDict()
        self._max_cached_scopes = max_cached_scopes
        self._scope_max_age = scope_max_age_seconds
        self._terms = TermCache()
        self._relevance = relevance_model

    async def scope_index(self, scope: MemoryScope) -> ScopeIndex:
        version = await self.store.scope_version(scope.tenant, scope.user)
        cached = self._scopes.get(scope)
        now = time.monotonic()
        if (
            cached is not None
            and cached.version == version
            and now - cached.built_at < self._scope_max_age
        ):
            self._scopes.move_to_end(scope)
            return cached.index
        records = await self.store.in_scope(scope)
        if len(records) > INDEX_IN_THREAD_ABOVE_RECORDS:
            index = await asyncio.to_thread(
                ScopeIndex.build, records, self._embedder.name, self._terms
            )
        else:
            index = ScopeIndex.build(records, self._embedder.name, self._terms)
        self._scopes[scope] = _CachedScope(version, now, index, SearchMemo(clock=self._clock))
        self._scopes.move_to_end(scope)
        while len(self._scopes) > self._max_cached_scopes:
            self._scopes.popitem(last=False)
        return index

    async def add(
        self,
        scope: MemoryScope,
        items: Sequence[NewMemory],
        policy: MemoryPolicy,
        *,
        once: WriteOnce | None = None,
    ) -> list[MemoryRecord]:
        """Guard, embed and store `items` as one batch: all are stored or none.

        Raises `MemoryRejected` (nothing stored) when the guard flags an item and the
        policy says reject; with `quarantine` the item is stored but never injected.
        Raises `QuotaExceeded` when the batch would take the user past the policy's
        caps, and `AlreadyWritten` when `once.key` was used by an earlier write.
        Supersedes what `versions.plan_supersession` says (their copies leave the
        session caches); raises `SupersedeConflict` when a named `supersedes` is gone
        or superseded already.
        """
        limits = policy.limits
        quota = UserQuota(limits.max_memories_per_user, limits.max_bytes_per_user)
        # Refuse a write past the cap before the guard and the embedder spend anything on
        # it (a client at its cap may keep retrying); the store checks again, atomically.
        adding = sum(
            stored_size_bytes(item.content, item.source, item.tags, item.metadata) for item in items
        )
        check_quota(quota, await self.store.usage(scope.tenant, scope.user), (len(items), adding))
        records = await self.embed_records(self._new_records(scope, items, policy))
        by_key = [item.supersede for item in items]
        for attempt in range(_SUPERSEDE_ATTEMPTS):
            planned, marks = records, dict[str, str]()
            if any(record.key or record.supersedes for record in records):
                stored = await self.store.in_scope(
                    MemoryScope(scope.tenant, scope.user, scope.namespace or "")
                )
                planned, marks = plan_supersession(records, by_key, stored)
            idempotent = (
                None
                if once is None
                else IdempotentWrite(
                    once.key, once.fingerprint, once.render(planned), limits.idempotency_ttl_seconds
                )
            )
            try:
                await self.store.add(planned, quota=quota, idempotent=idempotent, supersedes=marks)
            except SupersedeConflict as conflict:
                # A named version is final; a same-key one superseded meanwhile is
                # planned again against what is stored now.
                explicit = any(r.supersedes == conflict.memory_id for r in records)
                if explicit or attempt == _SUPERSEDE_ATTEMPTS - 1:
                    raise
                continue
            if marks:
                await self.sessions.forget(scope.tenant, scope.user, list(marks))
            return planned
        raise AssertionError("unreachable")

    def _new_records(
        self, scope: MemoryScope, items: Sequence[NewMemory], policy: MemoryPolicy
    ) -> list[MemoryRecord]:
        """Guard-checked records (raises `MemoryRejected`), without vectors."""
        now = self._clock()
        records: list[MemoryRecord] = []
        for index, item in enumerate(items):
            verdict = inspect_memory_content(item.content)
            if verdict is not None and policy.write_guard == "reject":
                raise MemoryRejected(index, verdict)
            kind = infer_kind(item.kind, item.valid_from, item.valid_to, item.occurred_at)
            key = item.key
            if key is None and kind == "semantic":
                key = rule_key(item.content)
            records.append(
                MemoryRecord(
                    id=new_memory_id(),
                    tenant=scope.tenant,
                    user=scope.user,
                    namespace=scope.namespace or "",
                    content=item.content,
                    source=item.source,
                    tags=item.tags,
                    metadata=item.metadata,
                    created_at=item.created_at if item.created_at is not None else now,
                    valid_from=item.valid_from,
                    valid_to=item.valid_to,
                    quarantine=None if verdict is None else f"{verdict.kind}:{verdict.rule}",
                    kind=kind,
                    key=key,
                    entity=item.entity,
                    occurred_at=item.occurred_at,
                    supersedes=item.supersedes,
                )
            )
        return records

    async def embed_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        """The records with their vectors. Quarantined content is never embedded: it
        must not be found by meaning either."""
        embedded = list(records)
        to_embed = [i for i, record in enumerate(embedded) if record.quarantine is None]
        if to_embed:
            vectors = await self._embedder.embed([embedded[i].content for i in to_embed])
            for row, i in enumerate(to_embed):
                embedded[i] = embedded[i].with_vector(vectors[row], self._embedder.name)
        return embedded

    async def recorded_answer(self, scope: MemoryScope, key: str) -> RecordedAnswer | None:
        return await self.store.recorded_answer(scope.tenant, scope.user, key)

    async def embed_query(self, text: str, timeout_seconds: float) -> Vector | None:
        """None when the embedder fails or is slow: retrieval goes on by keyword."""
        try:
            vectors = await asyncio.wait_for(self._embedder.embed([text]), timeout_seconds)
        except Exception as exc:  # includes TimeoutError
            self._embed_failures.warning(
                "memory query embedding failed (%s); keyword match only", type(exc).__name__
            )
            return None
        vector: Vector = vectors[0]
        return vector

    async def search(
        self,
        scope: MemoryScope,
        query: str,
        top_k: int,
        policy: MemoryPolicy,
        *,
        query_vector: Vector | None = None,
        mode: RankMode = "fused",
        index: ScopeIndex | None = None,
        now: float | None = None,
    ) -> list[ScoredMemory]:
        """Best first, at most `top_k`, at least the policy's `min_score`; one result
        per distinct text (the best-scored copy)."""
        if index is None:
            index = await self.scope_index(scope)
        if index.size == 0 or not query.strip():
            return []
        searches = self._searches_of(scope, index) if now is None else None
        key = (query, top_k, policy.ranking, mode)
        memoised = None if searches is None else searches.get(key)
        if memoised is not None:
            return memoised
        if query_vector is None and mode != "keyword":
            query_vector = await self.embed_query(query, policy.embed_timeout_seconds)
        ranking = functools.partial(
            rank,
            index,
            query,
            query_vector,
            self._clock() if now is None else now,
            policy.ranking,
            # Room for duplicates to be dropped below.
            top_k=top_k * 2,
            mode=mode,
            relevance_model=self._relevance,
            distinct=top_k,
        )
        results = await ranked_once_per_text(ranking, index, query_vector, top_k)
        if searches is not None and (query_vector is not None or mode == "keyword"):
            searches.put(key, results, next_validity_change(index, self._clock()))
        return results

    def memoised(
        self, scope: MemoryScope, query: str, top_k: int, policy: MemoryPolicy, index: ScopeIndex
    ) -> list[ScoredMemory] | None:
        """What `search` returned for the same question over `index` (the scope's index
        read this turn) lately; None when there is no such result."""
        searches = self._searches_of(scope, index)
        return None if searches is None else searches.get((query, top_k, policy.ranking, "fused"))

    def _searches_of(self, scope: MemoryScope, index: ScopeIndex) -> SearchMemo | None:
        cached = self._scopes.get(scope)
        # Only the memo of that very index: another one ranks other memories.
        return cached.searches if cached is not None and cached.index is index else None

    async def delete(self, tenant: str, memory_id: str) -> bool:
        """Delete a memory and every copy of it in its user's session caches."""
        record = await self.store.get(tenant, memory_id)
        if record is None:
            return False
        deleted = await self.store.delete(tenant, memory_id)
        # Also when the store says it was already gone: a concurrent delete may have
        # failed between the two steps, and forgetting twice is harmless.
        await self.sessions.forget(tenant, record.user, [memory_id])
        return deleted

    async def load_session(self, scope: MemoryScope, session: str) -> list[SessionItem]:
        """The session's cached items, read after its last write (`session_writes`)."""
        await self.session_writes.settled((scope.tenant, scope.user, session))
        return await self.sessions.load(scope.tenant, scope.user, session)

    async def session_turn(
        self,
        scope: MemoryScope,
        session: str,
        retrieved: Sequence[ScoredMemory],
        policy: MemoryPolicy,
        index: ScopeIndex | None = None,
        *,
        knowledge: Sequence[ScoredMemory] = (),
        knowledge_index: ScopeIndex | None = None,
        cached: Sequence[SessionItem] | None = None,
    ) -> SessionTurn:
        """Merge this turn's retrieval (memories and, when given, the tenant's
        knowledge) with the session cache and queue the cache's write (`session_writes`:
        the turn does not wait for it, the next read of the session comes after it).

        Cached items whose memory was deleted are dropped here too: `delete` removes
        them from the sessions, but a turn that read the session before the delete may
        have written them back. Cached knowledge items live only while they are in
        `knowledge_index` (the request's knowledge scope, fresh: its version is read on
        every turn), so a deleted or replaced item is never injected again, nor one of
        another namespace; without an index (knowledge off) none are kept. `cached`:
        the session's items as `sessions.load` returned them this turn (read while
        retrieval ran); None: read here."""
        settings = policy.session
        now = self._clock()
        if cached is None:
            cached = await self.load_session(scope, session)
        memories = [item for item in cached if item.source != KNOWLEDGE_SOURCE]
        live = await self._still_stored(scope, memories, index)
        known = frozenset() if knowledge_index is None else knowledge_index.ids
        kept = [
            item
            for item in cached
            if item.memory_id in (known if item.source == KNOWLEDGE_SOURCE else live)
        ]
        turn = merge_turn(kept, retrieved, settings, now, knowledge)
        if turn.changed or len(kept) != len(cached):
            # Not awaited: nothing in this turn reads it back (the next read waits for it).
            self.session_writes.submit(
                (scope.tenant, scope.user, session),
                self.sessions.save(
                    scope.tenant, scope.user, session, turn.session_items, settings.ttl_seconds
                ),
            )
        return turn

    async def _still_stored(
        self, scope: MemoryScope, cached: Sequence[SessionItem], index: ScopeIndex | None
    ) -> set[str]:
        """The ids of `cached` that still exist. The scope's index (fresh: its version is
        read on every request) answers for its own memories; only items from outside it
        (another namespace of the user) cost a store read."""
        if not cached:
            return set()
        if index is None:
            index = await self.scope_index(scope)
        ids = {item.memory_id for item in cached}
        live = ids & index.ids
        # A superseded version is still stored, but no longer live.
        unknown = ids - index.stored_ids
        if unknown and scope.namespace is not None:
            live |= await self.store.existing(scope.tenant, sorted(unknown))
        return live

    async def touch(self, tenant: str, memory_ids: Sequence[str]) -> None:
        await self.store.touch(tenant, memory_ids, self._clock())

    def touch_later(self, tenant: str, memory_ids: Sequence[str]) -> None:
        """`touch`, queued: written in the background, in order (`AccessRecorder`)."""
        self.access.record(tenant, memory_ids, self._clock())

    async def close(self) -> None:
        """Writes the queued access counts and waits for the session writes under way;
        before the stores close."""
        await self.session_writes.drain()
        await self.access.close()
