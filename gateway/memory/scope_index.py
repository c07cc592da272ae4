"""One scope's memories (a user's, or a tenant's knowledge items) prepared for ranking:
built once per version of the scope (`MemoryService`, `KnowledgeService`) and read by
every query of `gateway.memory.retrieval.rank` until the scope changes.

What depends only on the scope is worked out here, once, not per query: the vectors
stacked in one matrix, the inverted index of keyword terms, the BM25 length norm of
each row, the time and use columns, each row's dedup key and its neighbours in time.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gateway.memory.records import MEMORY_KINDS, MemoryRecord
from gateway.memory.relevance import neighbours
from gateway.memory.text import dedup_key, keyword_terms

Floats = npt.NDArray[np.float64]
Indices = npt.NDArray[np.int64]

BM25_K1 = 1.2
BM25_B = 0.75


class TermCache:
    """Keyword terms and dedup key per memory id, bounded (LRU). Memories are ADD-only,
    so an id's text never changes: rebuilding a scope after one memory was added
    tokenises only that one."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self._entries: OrderedDict[str, tuple[Counter[str], str]] = OrderedDict()
        self._max_entries = max_entries
        # Large scopes are indexed in a worker thread while small ones are indexed on
        # the event loop: the LRU's look-up, insert and eviction must not interleave.
        self._lock = threading.Lock()

    def get(self, record: MemoryRecord) -> tuple[Counter[str], str]:
        with self._lock:
            entry = self._entries.get(record.id)
            if entry is not None:
                self._entries.move_to_end(record.id)
                return entry
        entry = (Counter(keyword_terms(record.content)), dedup_key(record.content))
        with self._lock:
            self._entries[record.id] = entry
            if len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return entry


@dataclass(frozen=True, slots=True)
class ScopeIndex:
    """One scope's memories, prepared for ranking. Quarantined memories are left out of
    the ranking but their texts count as known (capture does not store them again);
    superseded versions are neither ranked nor known (the old value may be stated again)."""

    records: list[MemoryRecord]
    known_keys: frozenset[str]
    ids: frozenset[str]  # of `records`: what a session may still carry from this scope
    matrix: npt.NDArray[np.float32] | None  # rows of `records`; zeros where no vector
    has_vector: npt.NDArray[np.bool_]
    # Every row holds a comparable vector (the usual case): the per-query masks by
    # `has_vector` would keep every value, so they are skipped.
    all_vectors: bool
    postings: dict[str, tuple[Indices, Floats]]  # term -> (record rows, term counts)
    lengths: Floats
    # BM25's length normalisation per row, k1 * (1 - b + b * length / mean length):
    # the same for every query of the scope.
    bm25_norms: Floats
    created_at: Floats
    access_count: Floats
    valid_from: Floats  # NaN: no bound
    valid_to: Floats
    has_validity_bounds: bool  # any row with valid_from or valid_to (else all hold always)
    last_used_at: Floats  # last access, else creation: what recency decays from
    kind_codes: Indices  # positions in `MEMORY_KINDS`
    # Current, unquarantined procedural memories, oldest first: injected whole, in order.
    procedural: tuple[MemoryRecord, ...] = ()
    stored_ids: frozenset[str] = frozenset()  # every id of the scope, superseded too
    # `relevance.neighbours(created_at)`: fixed per scope, so found once, not per query.
    adjacent: tuple[Indices, Indices] | None = None
    # `dedup_key` of each row of `records` (the TermCache worked it out for the row):
    # results are deduplicated and merged by it on every turn.
    keys: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return len(self.records)

    @classmethod
    def build(
        cls,
        records: Sequence[MemoryRecord],
        embedder_name: str,
        terms: TermCache | None = None,
    ) -> ScopeIndex:
        terms = terms or TermCache()
        current = [record for record in records if record.current]
        usable = [
            record
            for record in current
            if record.quarantine is None and record.kind != "procedural"
        ]
        procedural = sorted(
            (r for r in current if r.quarantine is None and r.kind == "procedural"),
            key=lambda record: (record.created_at, record.id),
        )
        matrix, has_vector = _vector_matrix(usable, embedder_name)
        postings, lengths = _postings(usable, terms)

        def column(values: Sequence[float | None]) -> Floats:
            return np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)

        created_at = column([record.created_at for record in usable])
        valid_from = column([record.valid_from for record in usable])
        valid_to = column([record.valid_to for record in usable])

        return cls(
            records=usable,
            known_keys=frozenset(terms.get(record)[1] for record in current),
            ids=frozenset(record.id for record in [*usable, *procedural]),
            matrix=matrix,
            has_vector=has_vector,
            all_vectors=bool(has_vector.all()),
            postings=postings,
            lengths=lengths,
            bm25_norms=_bm25_norms(lengths),
            created_at=created_at,
            access_count=column([float(record.access_count) for record in usable]),
            valid_from=valid_from,
            valid_to=valid_to,
            has_validity_bounds=not (np.isnan(valid_from).all() and np.isnan(valid_to).all()),
            last_used_at=column(
                [max(record.created_at, record.last_access_at or 0.0) for record in usable]
            ),
            kind_codes=np.asarray(
                [MEMORY_KINDS.index(record.kind) for record in usable], dtype=np.int64
            ),
            procedural=tuple(procedural),
            stored_ids=frozenset(record.id for record in records),
            adjacent=neighbours(created_at),
            keys=tuple(terms.get(record)[1] for record in usable),
        )


def _postings(
    usable: Sequence[MemoryRecord], terms: TermCache
) -> tuple[dict[str, tuple[Indices, Floats]], Floats]:
    """The inverted index (term -> rows holding it, and how often) and each row's
    length in terms."""
    rows: defaultdict[str, list[int]] = defaultdict(list)
    counts: defaultdict[str, list[float]] = defaultdict(list)
    lengths = np.zeros(len(usable), dtype=np.float64)
    for row, record in enumerate(usable):
        record_terms = terms.get(record)[0]
        lengths[row] = sum(record_terms.values())
        for term, tf in record_terms.items():
            rows[term].append(row)
            counts[term].append(float(tf))
    postings = {
        term: (np.asarray(rows[term], dtype=np.int64), np.asarray(counts[term])) for term in rows
    }
    return postings, lengths


def _bm25_norms(lengths: Floats) -> Floats:
    """k1 * (1 - b + b * length / mean length) per row, the mean at least 1 (written
    as the ranking wrote it per query, so the scores stay the same to the bit)."""
    if lengths.size == 0:
        return np.zeros(0, dtype=np.float64)
    average_length = max(float(lengths.mean()), 1.0)
    norms: Floats = BM25_K1 * (1 - BM25_B + BM25_B * lengths / average_length)
    return norms


def _vector_matrix(
    usable: Sequence[MemoryRecord], embedder_name: str
) -> tuple[npt.NDArray[np.float32] | None, npt.NDArray[np.bool_]]:
    """The records' vectors stacked in rows (zeros where a record has none), and which
    rows hold one."""
    count = len(usable)
    # Vectors of another embedder (or shape) are not comparable: such memories are
    # found by keyword only until re-embedded.
    dimensions = next(
        (
            record.vector.shape[0]
            for record in usable
            if record.vector is not None and record.embedder == embedder_name
        ),
        None,
    )
    matrix = None
    has_vector = np.zeros(count, dtype=np.bool_)
    if dimensions is not None:
        matrix = np.zeros((count, dimensions), dtype=np.float32)
        for row, record in enumerate(usable):
            vector = record.vector
            if (
                vector is not None
                and record.embedder == embedder_name
                and vector.shape == (dimensions,)
            ):
                matrix[row] = vector
                has_vector[row] = True
    return matrix, has_vector
