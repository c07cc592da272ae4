"""Semantic cache vectors in Redis, searched with RediSearch through redisvl.

Layout, for `index_name = index_name_for(embedder, dimensions)`:

- search index `<prefix>-semantic-<index_name>` over HASH keys
  `<prefix>:semantic:<index_name>:<entry_id>`: the embedder is in the name, so vectors
  of two models are never compared, and switching models starts an empty index;
- tags entry_id, tenant, fingerprint, model, policy_version; numerics created_at,
  expires_at; `embedding` is an HNSW / COSINE / FLOAT32 vector (M, EF_CONSTRUCTION and
  EF_RUNTIME from `storage.vector_index`); query_text and
  completion (orjson) are stored in the hash but not indexed;
- each hash carries its own TTL (PEXPIRE to `expires_at`), so Redis drops old entries
  and the index with them; a query also filters on `expires_at`, so entries past it but
  not yet evicted never come back.

A search is one FT.SEARCH, on the hot path's pipelined socket: a KNN over the vectors of
one fingerprint (a tag pre-filter), returning the few winners' fields in the same round
trip. A partition of at most `exact_scan_max_entries` is scanned exactly
(`HYBRID_POLICY ADHOC_BF`); a larger one searches the graph. The partition's size comes
from `PartitionSizes` (counted in the background on first use, then when old).

With a `RedisCapacity` (`capacity.semantic_index`), a write is one script: the hash,
its TTL, its accounting and the LRU evictions past the caps (a deleted hash leaves the
search index with it). A served hit moves the entry up the LRU order after the response
is on its way (`touch`, fire-and-forget).

The index is created lazily: when Redis is down at start-up, `open` succeeds and the
first operation after Redis answers creates it. It is re-checked after every outage
(`RedisConnection.generation`) and when a query says it is missing, since a Redis
without persistence comes back empty.

Slightly over the ~400-line target: the index schema, its lazy re-creation and the
queries share the outage handling above, which would otherwise be split across modules.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson
import redis.exceptions
from redis.asyncio import Redis
from redis.typing import EncodableT, FieldT
from redisvl.exceptions import RedisSearchError
from redisvl.index import AsyncSearchIndex
from redisvl.query import CountQuery
from redisvl.query.filter import Num
from redisvl.schema import IndexSchema

from gateway.cache.purge import PurgeFilter
from gateway.cache.vector_index_settings import VectorIndexSettings
from gateway.storage.protocols import SemanticEntry, StoreUnavailable
from gateway.storage.redis.capacity import RedisCapacity
from gateway.storage.redis.connection import RedisConnection
from gateway.storage.redis.partition_sizes import PartitionSizes
from gateway.storage.redis.purge_scan import delete_scanned
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

_INDEX_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_VECTOR_FIELD = "embedding"
_DISTANCE_FIELD = "vector_distance"
# Characters RediSearch's tag syntax gives a meaning to. redisvl's TokenEscaper leaves
# "|" (OR inside a tag set) alone: tested in test_tag_syntax_in_a_fingerprint_is_escaped.
_TAG_SPECIAL = re.compile(r"[,.<>{}\[\]\\\"':;!@#$%^&*()\-+=~\/ |?]")
_RETURN_FIELDS = [
    "entry_id",
    "tenant",
    "model",
    "fingerprint",
    "policy_version",
    "query_text",
    "completion",
    "created_at",
    "expires_at",
]
# ARGV[10] TTL (ms), ARGV[11..] the hash's field/value pairs.
_WRITE = """
redis.call('HSET', KEYS[1], unpack(ARGV, 11))
redis.call('PEXPIRE', KEYS[1], ARGV[10])
return account(KEYS[1])
"""
# RediSearch's wordings for "no such index" across versions.
_MISSING_INDEX = ("no such index", "unknown index name", "unknown index")


def _schema(name: str, key_prefix: str, dimensions: int, hnsw: VectorIndexSettings) -> IndexSchema:
    tags = ("entry_id", "tenant", "fingerprint", "model", "policy_version")
    return IndexSchema.from_dict(
        {
            "index": {
                "name": name,
                "prefix": key_prefix,
                "key_separator": ":",
                "storage_type": "hash",
            },
            "fields": [
                *({"name": tag, "type": "tag"} for tag in tags),
                {"name": "created_at", "type": "numeric"},
                {"name": "expires_at", "type": "numeric"},
                {
                    "name": _VECTOR_FIELD,
                    "type": "vector",
                    "attrs": {
                        "dims": dimensions,
                        "algorithm": "hnsw",
                        "distance_metric": "cosine",
                        "datatype": "float32",
                        # Fixed at FT.CREATE; EF_RUNTIME is also sent with each query.
                        "m": hnsw.hnsw_m,
                        "ef_construction": hnsw.hnsw_ef_construction,
                        "ef_runtime": hnsw.hnsw_ef_runtime,
                    },
                },
            ],
        }
    )


def _is_missing_index(exc: BaseException) -> bool:
    text = f"{exc} {exc.__cause__ or ''}".lower()
    return any(wording in text for wording in _MISSING_INDEX)


# The longest Redis may spend counting one partition's entries, in milliseconds: the
# count holds Redis's main thread (every request's commands wait behind it) and runs
# behind the searches, at most once per partition and refresh interval
# (docs/measurements.md#partition-counts-stopped-by-redis).
COUNT_TIMEOUT_MS = 50


class RedisVectorIndex:
    """`VectorIndex` in Redis. Build it with `open()`; it shares (never closes) the
    connection."""

    def __init__(
        self,
        connection: RedisConnection,
        index_name: str,
        dimensions: int,
        *,
        prefix: str = "gateway",
        clock: Callable[[], float] = time.time,
        capacity: RedisCapacity | None = None,
        settings: VectorIndexSettings | None = None,
    ) -> None:
        if not _INDEX_NAME.fullmatch(index_name):
            raise ValueError(f"unsafe index name {index_name!r}; use index_name_for()")
        if dimensions <= 0:
            raise ValueError("dimensions must be positive")
        self._connection = connection
        self._dimensions = dimensions
        self._clock = clock
        self.name = f"{prefix}-semantic-{index_name}"
        self.key_prefix = f"{prefix}:semantic:{index_name}"
        self.settings = settings or VectorIndexSettings()
        self._index = AsyncSearchIndex(
            _schema(self.name, self.key_prefix, dimensions, self.settings),
            redis_client=connection.client,
            owns_client=False,
        )
        # The connection generation in which the index was last seen to exist.
        self._ready_generation: int | None = None
        self._creating = asyncio.Lock()
        self._bad_rows = ThrottledLogger(logger, interval_seconds=60.0)
        self._capacity = capacity
        self._write = None if capacity is None else capacity.register(_WRITE)
        # Touches in flight (a reference each, or the loop could collect them).
        self._touches: set[asyncio.Task[None]] = set()
        self._touch_failures = ThrottledLogger(logger, interval_seconds=60.0)
        self._exact_scan_limit = self.settings.exact_scan_limit(dimensions)
        # How long Redis may spend counting one partition (see count_partition).
        self.count_timeout_ms = COUNT_TIMEOUT_MS
        self._partition_sizes = PartitionSizes(
            self.count_partition,
            refresh_seconds=self.settings.partition_count_refresh_seconds,
            exact_scan_limit=self._exact_scan_limit,
        )

    @classmethod
    async def open(
        cls,
        connection: RedisConnection,
        index_name: str,
        dimensions: int,
        *,
        prefix: str = "gateway",
        clock: Callable[[], float] = time.time,
        capacity: RedisCapacity | None = None,
        settings: VectorIndexSettings | None = None,
    ) -> RedisVectorIndex:
        """Create the search index if missing (safe when it exists). With Redis down,
        return anyway: the index is created on first use. A server without search
        raises `RedisSearchMissing`."""
        index = cls(
            connection,
            index_name,
            dimensions,
            prefix=prefix,
            clock=clock,
            capacity=capacity,
            settings=settings,
        )
        try:
            await index.ensure_index()
        except StoreUnavailable:
            # Only an outage is tolerated here; a missing module is a deployment error.
            logger.warning(
                "semantic index %s not created yet: redis at %s is unavailable; "
                "it will be created when Redis answers",
                index.name,
                connection.address,
            )
        return index

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def key_for(self, entry_id: str) -> str:
        return f"{self.key_prefix}:{entry_id}"

    async def ensure_index(self) -> None:
        if self._ready_generation == self._connection.generation:
            return
        async with self._creating:
            if self._ready_generation == self._connection.generation:
                return
            await self._connection.check_search_module()
            await self._connection.run(lambda _: self._create())
            self._ready_generation = self._connection.generation

    async def _create(self) -> None:
        try:
            # Checks existence first; an existing index (ours, or another replica's)
            # is kept with its entries.
            await self._index.create(overwrite=False)
        except RedisSearchError as exc:
            # Two replicas may both see "missing" and race to FT.CREATE.
            if "already exists" not in f"{exc} {exc.__cause__ or ''}".lower():
                raise

    def _vector_bytes(self, vector: npt.ArrayLike) -> bytes:
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        if v.shape[0] != self._dimensions:
            raise ValueError(
                f"vector has {v.shape[0]} dimensions, the index holds {self._dimensions}"
            )
        norm = float(np.linalg.norm(v))
        if not math.isfinite(norm) or norm == 0.0:
            raise ValueError("vector must be finite and non-zero")
        # RediSearch reads FLOAT32 blobs in the server's byte order: little-endian on
        # every platform Redis ships for.
        return v.astype("<f4", copy=False).tobytes()

    async def add(self, entry: SemanticEntry, vector: npt.ArrayLike) -> None:
        blob = self._vector_bytes(vector)
        # Relative TTL from our clock: immune to clock skew between us and Redis.
        ttl_ms = int((entry.expires_at - self._clock()) * 1000)
        if ttl_ms <= 0:
            return
        await self.ensure_index()
        key = self.key_for(entry.entry_id)
        completion = orjson.dumps(entry.completion)
        mapping: dict[FieldT, EncodableT] = {
            "entry_id": entry.entry_id,
            "tenant": entry.tenant,
            "model": entry.model,
            "fingerprint": entry.fingerprint,
            "policy_version": entry.policy_version,
            "namespace": orjson.dumps(entry.namespace),
            "query_text": entry.query_text,
            "completion": completion,
            "created_at": entry.created_at,
            "expires_at": entry.expires_at,
            _VECTOR_FIELD: blob,
        }

        if self._capacity is not None and self._write is not None:
            # Counted as the embedded index counts: answer, question and vector.
            size_bytes = len(completion) + len(entry.query_text.encode()) + len(blob)
            args: list[Any] = [*self._capacity.write_args(entry.tenant, size_bytes), ttl_ms]
            for name, value in mapping.items():
                args += [name, value]
            reply = await self._write([key], args)
            self._capacity.settle(reply)
            return

        async def write(client: Redis) -> None:
            # MULTI/EXEC: no reader ever sees the entry without its TTL.
            async with client.pipeline(transaction=True) as pipe:
                pipe.hset(key, mapping=mapping)
                pipe.pexpire(key, ttl_ms)
                await pipe.execute()

        await self._connection.run(write)

    async def search(
        self, fingerprint: str, vector: npt.ArrayLike, top_k: int
    ) -> list[tuple[SemanticEntry, float]]:
        """Raw cosine, best first; only unexpired entries of that fingerprint."""
        if top_k <= 0:
            return []
        blob = self._vector_bytes(vector)
        await self.ensure_index()
        exact = self._scans_exactly(fingerprint)
        now = self._clock()
        command = self._knn_command(fingerprint, blob, now, top_k, exact=exact)
        # On the pipelined socket, like the exact read: every hit and miss sends one.
        reply = await self._search(lambda: self._connection.call(*command))
        if reply is None:
            return []
        rows = _search_rows(reply)
        hits: list[tuple[SemanticEntry, float]] = []
        for row in rows:
            hit = self._to_hit(row, now)
            if hit is not None:
                hits.append(hit)
        hits.sort(key=lambda hit: -hit[1])
        return hits

    def _scans_exactly(self, fingerprint: str) -> bool:
        limit = self._exact_scan_limit
        if limit <= 0:
            return False
        entries = self._partition_sizes.size(fingerprint)
        return entries is not None and entries <= limit

    async def partition_counts_settled(self) -> None:
        """Wait for the partition counts under way (tests, benchmarks)."""
        await self._partition_sizes.settled()

    async def count_partition(self, fingerprint: str) -> int:
        """Entries tagged with this fingerprint, expired ones not yet dropped included
        (an upper bound is what the choice of policy needs); for a partition too large
        to count within `count_timeout_ms`, a lower bound above the exact-scan limit
        (a count that took that long but stayed within the limit is an error).

        Counting walks the partition on Redis's main thread, where every other command
        of every replica waits behind it: a million entries took 40 ms in one run and
        over 250 ms in others (right after a bulk load). RediSearch stops a query at
        its TIMEOUT and, by default (`ON_TIMEOUT return`), answers with what it counted
        so far, without saying so; a count that took that long is taken as cut short.
        A partition that size is far above any exact-scan limit (15,000 entries count
        in a few ms), so a lower bound above the limit chooses as the full count would.

        Sent on redis-py, around the circuit and the hot path's socket: a count that
        fails (a Redis configured `ON_TIMEOUT fail`, a stalled server) fails alone and
        never opens the circuit for the requests (the size stays unknown and RediSearch
        chooses the policy, `partition_sizes.py`)."""
        if not self._connection.available:
            raise StoreUnavailable("redis is unavailable; partition not counted")
        query = f"@fingerprint:{{{_escape_tag(fingerprint)}}}"
        started = time.perf_counter()
        reply = await self._connection.client.execute_command(  # type: ignore[no-untyped-call]
            "FT.SEARCH", self.name, query, "LIMIT", 0, 0, "TIMEOUT", self.count_timeout_ms
        )
        elapsed_ms = (time.perf_counter() - started) * 1000
        if isinstance(reply, dict):  # RESP3
            total = reply.get(b"total_results")
            entries = int(reply.get("total_results", 0) if total is None else total)
        else:
            entries = int(reply[0])
        if elapsed_ms >= self.count_timeout_ms and entries <= self._exact_scan_limit:
            # Perhaps cut short before the limit (a stalled server or client): not a size
            # to scan by. Above the limit, a partial count chooses as the full one would.
            raise StoreUnavailable(f"counting took {elapsed_ms:.0f} ms; the count may be partial")
        return entries

    def _knn_command(
        self, fingerprint: str, blob: bytes, now: float, top_k: int, *, exact: bool = False
    ) -> list[Any]:
        """FT.SEARCH arguments of the KNN query, written out rather than built with
        redisvl's VectorQuery: the query object and its result processing cost CPU on
        every hit and miss (see docs/measurements.md#redis-knn-query).
        The graph's query is `VectorQuery(..., filter_expression=(Tag("fingerprint") ==
        fingerprint) & (Num("expires_at") > now))`. The exact scan's filters on the tag
        alone: intersecting the partition with a range over every entry's expiry cost more
        than the scan itself (7.3 against 2.5 ms for 10,000 of 200,000 entries; ~20 ms at
        a million), and `_to_hit` drops what expired before Redis evicted it anyway.
        RediSearch refuses EF_RUNTIME with ADHOC_BF: there is no graph walk."""
        fields = [*_RETURN_FIELDS, _DISTANCE_FIELD]
        tag = f"@fingerprint:{{{_escape_tag(fingerprint)}}}"
        params: list[Any] = ["vector", blob]
        if exact:
            knn = f"{tag}=>[KNN {int(top_k)} @{_VECTOR_FIELD} $vector HYBRID_POLICY ADHOC_BF"
        else:
            knn = (
                f"({tag} @expires_at:[({now!r} +inf])"
                f"=>[KNN {int(top_k)} @{_VECTOR_FIELD} $vector EF_RUNTIME $EF"
            )
            params += ["EF", self.settings.hnsw_ef_runtime]
        return [
            "FT.SEARCH", self.name, f"{knn} AS {_DISTANCE_FIELD}]",
            "RETURN", len(fields), *fields,
            "SORTBY", _DISTANCE_FIELD, "ASC",
            "LIMIT", 0, int(top_k),
            "PARAMS", len(params), *params,
            "DIALECT", 2,
        ]  # fmt: skip

    async def _search(self, operation: Callable[[], Awaitable[Any]]) -> Any:
        """Run a search; None when the index turned out to be missing (it is re-created,
        empty, for the next call). redisvl raises its own error, a raw FT.SEARCH redis-py's."""
        try:
            return await operation()
        except (RedisSearchError, redis.exceptions.ResponseError) as exc:
            if not _is_missing_index(exc):
                raise
        logger.warning("semantic index %s was missing (Redis restarted?); re-creating", self.name)
        self._ready_generation = None
        await self.ensure_index()
        return None

    def _to_hit(self, row: dict[str, Any], now: float) -> tuple[SemanticEntry, float] | None:
        try:
            # RediSearch returns numeric fields rounded to 12 significant digits
            # (10 ms for Unix times): precise enough for expiry and display.
            expires_at = float(row["expires_at"])
            if expires_at <= now:
                return None
            entry = SemanticEntry(
                entry_id=_text(row["entry_id"]),
                tenant=_text(row["tenant"]),
                model=_text(row["model"]),
                fingerprint=_text(row["fingerprint"]),
                query_text=_text(row.get("query_text", "")),
                completion=orjson.loads(row["completion"]),
                created_at=float(row["created_at"]),
                expires_at=expires_at,
                policy_version=_text(row.get("policy_version", "")),
            )
            # COSINE distance is 1 - cos; clamp float noise outside [-1, 1].
            cosine = min(1.0, max(-1.0, 1.0 - float(row["vector_distance"])))
        except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as exc:
            self._bad_rows.warning(
                "unreadable semantic entry %s skipped (%s)", row.get("id"), type(exc).__name__
            )
            return None
        return entry, cosine

    def touch(self, entry_id: str) -> None:
        """A served hit: the entry becomes the most recently used, in the background (the
        response does not wait for it; a lost touch only ages the entry early)."""
        if self._capacity is None:
            return
        task = asyncio.get_running_loop().create_task(self._touch(self.key_for(entry_id)))
        self._touches.add(task)
        task.add_done_callback(self._touches.discard)

    async def _touch(self, key: str) -> None:
        assert self._capacity is not None
        try:
            await self._capacity.touch(key)
        except Exception as exc:  # fire-and-forget: never an unhandled task error
            self._touch_failures.warning("semantic LRU touch failed (%s)", type(exc).__name__)

    async def sweep_expired(self) -> int:
        """Drop the bookkeeping of entries Redis expired or evicted itself."""
        return 0 if self._capacity is None else await self._capacity.sweep()

    async def count(self) -> int:
        """Unexpired entries held."""
        await self.ensure_index()
        query = CountQuery(filter_expression=Num("expires_at") > self._clock())
        total = await self._search(lambda: self._connection.run(lambda _: self._index.query(query)))
        return 0 if total is None else int(total)

    async def purge(self, purge_filter: PurgeFilter) -> int:
        """SCANs this index's entries (an operator action, O(entries)) and deletes the
        matching ones; the search index drops deleted hashes by itself."""
        fields = ["entry_id", "tenant", "model", "namespace"]

        async def read(client: Redis, batch: list[bytes]) -> list[Any]:
            async with client.pipeline(transaction=False) as pipe:
                for key in batch:
                    pipe.hmget(key, fields)
                return list(await pipe.execute())

        def doomed(_key: bytes, row: Any) -> bool:
            entry_id, tenant, model, namespace = row
            if entry_id is None:
                return False
            try:
                stored = orjson.loads(namespace) if namespace else {}
            except orjson.JSONDecodeError:
                stored = {}
            return purge_filter.matches(_text(tenant), _text(model), stored, _text(entry_id))

        return await delete_scanned(self._connection, f"{self.key_prefix}:*", read, doomed)

    async def ping(self) -> bool:
        return await self._connection.ping()

    async def close(self) -> None:
        """The connection is shared and closed by its owner (`RedisBackend.close`);
        touches and partition counts still in flight are waited for (briefly: each is one
        bounded command)."""
        if self._touches:
            await asyncio.gather(*self._touches, return_exceptions=True)
        await self._partition_sizes.close()


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def _search_rows(reply: Any) -> list[dict[str, Any]]:
    """FT.SEARCH's reply as one dict of text fields per document (RESP2 list or RESP3
    map); `completion` stays bytes for orjson. A document without fields (its key
    expired between the index's answer and the load of its fields, which the exact
    scan's query, filtering on the tag alone, can return) is left out."""
    rows: list[dict[str, Any]] = []
    if isinstance(reply, dict):  # RESP3
        for result in reply.get(b"results") or reply.get("results") or []:
            attributes = result.get(b"extra_attributes") or result.get("extra_attributes")
            if attributes:
                rows.append({_text(k): v for k, v in attributes.items()})
        return rows
    # RESP2: [total, key, [field, value, ...], key, [...], ...]
    for position in range(2, len(reply), 2):
        flat = reply[position]
        if not flat:
            continue
        row = {_text(flat[i]): flat[i + 1] for i in range(0, len(flat) - 1, 2)}
        row["id"] = _text(reply[position - 1])
        rows.append(row)
    return rows


def _escape_tag(value: str) -> str:
    return _TAG_SPECIAL.sub(lambda match: "\\" + match.group(0), value)
