"""In-process fakes of the gateway's own protocols, shipped for tests (ours and users').

In the spirit of `httpx.MockTransport` and `starlette.testclient`: small, deterministic
stand-ins that keep the contract of the real part, so a test says what it needs (these
two texts mean the same; the reviewer says no; the cache is down) instead of writing a
fake class of its own.

- `TableEmbedder` (`gateway.embed.protocol.Embedder`): vectors from a table; a text not
  in it gets an axis of its own, so two different unknown texts are orthogonal;
- `StaticReviewer` (`gateway.review.protocol.Reviewer`): one fixed verdict, or an error;
- `MemoryExactCache` (`gateway.storage.protocols.ExactCache`): a dict with the TTL, replace
  and purge semantics of the real stores, on an injectable clock, with a fault switch;
- `MemoryCounterStore` (`gateway.adaptive.store.AdaptiveCounterStore`): the adaptive
  statistics' counters in a dict, added up as Redis and SQLite do, with a fault switch;
- `MemorySpendStore` (`gateway.storage.protocols.SpendStore`): spend rows in a dict,
  added up by identity, with a fault switch and a count of reads.

For the HTTP level see `gateway.testing.fake_upstream` (an OpenAI-compatible upstream on
loopback) and `gateway.testing.redis_server` (a real Redis with RediSearch).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from gateway.cache.purge import PurgeFilter
from gateway.embed.protocol import Vectors
from gateway.review.protocol import MODEL, ReviewVerdict
from gateway.spend.records import SpendRow
from gateway.storage.protocols import CachedCompletion, Counters


def _exact(text: str) -> str:
    return text


class TableEmbedder:
    """An embedder that looks texts up in a table.

    `table` maps a text to its vector (any length-`dimensions` sequence; it is
    L2-normalised, as the protocol requires). A text that is not in the table gets the
    next unused axis after the table's own (`spare_axes` of them): the same text always
    gets the same vector, two different unknown texts are orthogonal, and an unknown
    text is orthogonal to every table vector that has no weight on the spare axes. Past
    the spare axes, unknown texts get `ValueError`: the test needs more of them. With
    `default`, every unknown text gets that one vector instead (no spare axes).

    `key` turns a text into its table key (e.g. `str.lower`); `calibration` maps the
    raw cosine onto the gateway's scale (the identity by default, so a policy threshold
    reads as a cosine). `embed_calls` counts batches and `embedded` keeps every text.
    """

    def __init__(
        self,
        table: Mapping[str, Sequence[float]] | None = None,
        *,
        spare_axes: int = 8,
        key: Callable[[str], str] = _exact,
        calibration: Callable[[float], float] | None = None,
        name: str = "table-embedder",
        default: Sequence[float] | None = None,
    ) -> None:
        table = dict(table or {})
        if default is not None:
            spare_axes = 0
        lengths = {len(vector) for vector in (*table.values(), *([default] if default else []))}
        if len(lengths) > 1:
            raise ValueError(f"table vectors differ in length: {sorted(lengths)}")
        table_dimensions = lengths.pop() if lengths else 0
        self.name = name
        self.dimensions = table_dimensions + spare_axes
        self._first_spare = table_dimensions
        self._key = key
        self._calibration = calibration
        self._vectors: dict[str, Vectors] = {
            key(text): self._padded(vector) for text, vector in table.items()
        }
        self._next_spare = table_dimensions
        self._default = None if default is None else self._padded(default)
        self.embed_calls = 0
        self.embedded: list[str] = []

    @classmethod
    def from_groups(
        cls,
        groups: Iterable[Iterable[str]],
        *,
        spare_axes: int = 8,
        key: Callable[[str], str] = _exact,
        name: str = "table-embedder",
    ) -> TableEmbedder:
        """Texts of one group share an axis (cosine 1), texts of different groups are
        orthogonal: "these mean the same" written as data."""
        table: dict[str, list[float]] = {}
        listed = [list(group) for group in groups]
        for axis, group in enumerate(listed):
            for text in group:
                vector = [0.0] * len(listed)
                vector[axis] = 1.0
                table[text] = vector
        return cls(table, spare_axes=spare_axes, key=key, name=name)

    def _padded(self, vector: Sequence[float]) -> Vectors:
        array = np.zeros(self.dimensions, dtype=np.float32)
        array[: len(vector)] = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(array))
        if norm == 0.0:
            raise ValueError("a table vector must not be all zeros")
        return array / norm

    def vector(self, text: str) -> Vectors:
        """The vector of one text (assigning a spare axis to a new unknown text)."""
        key = self._key(text)
        found = self._vectors.get(key, self._default)
        if found is None:
            if self._next_spare >= self.dimensions:
                raise ValueError(
                    f"more than {self.dimensions - self._first_spare} texts outside the "
                    "table: raise spare_axes"
                )
            found = np.zeros(self.dimensions, dtype=np.float32)
            found[self._next_spare] = 1.0
            self._next_spare += 1
            self._vectors[key] = found
        return found

    async def embed(self, texts: list[str]) -> Vectors:
        self.embed_calls += 1
        self.embedded.extend(texts)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([self.vector(text) for text in texts]).astype(np.float32)

    def calibrate(self, cosine: float, language: str | None = None) -> float:
        return cosine if self._calibration is None else self._calibration(cosine)

    async def warm_up(self) -> None:
        return None


@dataclass(slots=True)
class StaticReviewer:
    """A reviewer that always gives the same verdict (or raises `error`).

    `calls` keeps every (query, candidate, similarity, stored_answer) it was asked
    about, so a test can check whether, and with what, the review band was reached;
    `tenants` whose request each was, with the budget it was given. `kind` is "model"
    (a stand-in for a chat model, which is sent the review band) unless set.
    """

    same_meaning: bool = True
    score: float | None = None  # default: 1.0 when same_meaning, else 0.0
    error: Exception | None = None
    name: str = "static-reviewer"
    kind: str = MODEL
    calls: list[tuple[str, str, float, str | None]] = field(default_factory=list)
    tenants: list[tuple[str | None, int | None]] = field(default_factory=list)

    async def review(
        self,
        query: str,
        candidate: str,
        similarity: float,
        stored_answer: str | None = None,
        *,
        tenant: str | None = None,
        budget_tokens: int | None = None,
    ) -> ReviewVerdict:
        self.calls.append((query, candidate, similarity, stored_answer))
        self.tenants.append((tenant, budget_tokens))
        if self.error is not None:
            raise self.error
        score = self.score if self.score is not None else float(self.same_meaning)
        return ReviewVerdict(same_meaning=self.same_meaning, score=score, reviewer=self.name)


@dataclass(frozen=True, slots=True)
class _Stored:
    entry: CachedCompletion
    expires_at: float


class MemoryExactCache:
    """The exact cache in a dict, with the real stores' semantics:

    - an entry is served until `put` time + `ttl_seconds` on `clock` (a `ttl_seconds`
      of zero or less stores nothing), then it is gone;
    - a second `put` under one key replaces the first;
    - `purge` removes what `PurgeFilter.matches` selects and says how many.

    Set `failure` to an exception to make every call raise it (a store that is down);
    `ping` then answers False. `clock` defaults to `time.time`, as `created_at` does.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._entries: dict[str, _Stored] = {}
        self.failure: Exception | None = None

    def _check(self) -> None:
        if self.failure is not None:
            raise self.failure

    @property
    def entries(self) -> dict[str, CachedCompletion]:
        """The entries still served now, by key (a copy)."""
        now = self._clock()
        return {k: s.entry for k, s in self._entries.items() if s.expires_at > now}

    async def get(self, key: str) -> CachedCompletion | None:
        self._check()
        stored = self._entries.get(key)
        if stored is None:
            return None
        if stored.expires_at <= self._clock():
            del self._entries[key]
            return None
        return stored.entry

    async def put(self, key: str, entry: CachedCompletion, ttl_seconds: int) -> None:
        self._check()
        if ttl_seconds <= 0:
            self._entries.pop(key, None)
            return
        self._entries[key] = _Stored(entry, self._clock() + ttl_seconds)

    async def purge(self, purge_filter: PurgeFilter) -> int:
        self._check()
        doomed = [
            key
            for key, stored in self._entries.items()
            if purge_filter.matches(
                stored.entry.tenant, stored.entry.model, stored.entry.namespace, key
            )
        ]
        for key in doomed:
            del self._entries[key]
        return len(doomed)

    async def ping(self) -> bool:
        return self.failure is None

    async def close(self) -> None:
        return None


class MemoryCounterStore:
    """The adaptive statistics' counter store in a dict: `add` sums deltas per scope and
    field (as HINCRBYFLOAT and the SQLite upsert do), `load` returns a copy. `writes`
    counts the `add` calls; set `failure` to make `add` and `load` raise it."""

    def __init__(self) -> None:
        self.counters: Counters = {}
        self.failure: Exception | None = None
        self.writes = 0

    def _check(self) -> None:
        if self.failure is not None:
            raise self.failure

    async def add(self, deltas: Counters) -> None:
        self._check()
        self.writes += 1
        for scope, fields in deltas.items():
            mine = self.counters.setdefault(scope, {})
            for name, value in fields.items():
                mine[name] = mine.get(name, 0.0) + value

    async def load(self) -> Counters:
        self._check()
        return {scope: dict(fields) for scope, fields in self.counters.items()}

    async def close(self) -> None:
        return None


class MemorySpendStore:
    """Spend rows in a dict keyed by (day, tenant, key, model), added up as the SQLite
    upsert and HINCRBYFLOAT do. `reads` counts `tenant_spent` calls; set `failure` to
    make every call raise it."""

    def __init__(self) -> None:
        self.stored: dict[tuple[str, str, str, str], SpendRow] = {}
        self.failure: Exception | None = None
        self.reads = 0

    def _check(self) -> None:
        if self.failure is not None:
            raise self.failure

    async def add(self, rows: Sequence[SpendRow]) -> None:
        self._check()
        for row in rows:
            known = self.stored.get(row.identity)
            self.stored[row.identity] = row if known is None else known.plus(row)

    async def tenant_spent(
        self, tenant: str, days: Sequence[str], key: str | None = None
    ) -> dict[str, float]:
        self._check()
        self.reads += 1
        spent = dict.fromkeys(days, 0.0)
        for row in self.stored.values():
            if row.tenant == tenant and row.day in spent and key in (None, row.key):
                spent[row.day] += row.spent_usd
        return spent

    async def rows(self, days: Sequence[str], tenant: str | None = None) -> list[SpendRow]:
        self._check()
        wanted = set(days)
        return [
            row
            for row in self.stored.values()
            if row.day in wanted and (tenant is None or row.tenant == tenant)
        ]

    async def close(self) -> None:
        return None
