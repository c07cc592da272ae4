"""`storage.vector_index`: how the Redis semantic index builds and searches its HNSW
graph. Plain data (no Redis import), validated at start-up like the rest of the config.

`hnsw_m` and `hnsw_ef_construction` shape the graph and apply when the index is
created: an existing index keeps the values it was created with (drop it, or change
`storage.redis_prefix`, to rebuild with new ones). `hnsw_ef_runtime` is sent with every
query and applies at once. A fingerprint partition of at most `exact_scan_max_entries`
entries is scanned exactly instead (RediSearch's `HYBRID_POLICY ADHOC_BF`): the graph,
filtered down to a small share of itself, misses true neighbours
(gateway/storage/redis/partition_sizes.py). The embedded backend searches exactly and
ignores all of them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# Defaults measured with benchmarks/storage_lookup.py (README, "Semantic index at scale"):
# HNSW's own default candidate list (10) loses true neighbours once a fingerprint holds
# ~100k entries; 200 finds nearly all of them for about 1 ms more per search
# (docs/measurements.md#hnsw-candidate-list-redis).
DEFAULT_HNSW_M = 16
DEFAULT_HNSW_EF_CONSTRUCTION = 200
DEFAULT_HNSW_EF_RUNTIME = 200
# The exact scan's budget when `exact_scan_max_entries` is not set, in vector values:
# RediSearch scanned 15,000 vectors of 512 dimensions in 3.2 ms p50, 3.9-4.6 ms p99 on a
# 2-core machine (docs/measurements.md#exact-scan-of-small-redis-partitions); the scan's
# cost grows with entries x dimensions, so a wider embedder scans fewer entries.
EXACT_SCAN_BUDGET_VALUES = 15_000 * 512
DEFAULT_PARTITION_COUNT_REFRESH_SECONDS = 30.0


class VectorIndexSettings(BaseModel):
    """HNSW parameters of the Redis semantic index."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Edges per node: memory (~8 bytes per edge and layer-0 node gets 2x) and recall.
    hnsw_m: int = Field(default=DEFAULT_HNSW_M, ge=4, le=128)
    # Candidate list while inserting: build time against graph quality.
    hnsw_ef_construction: int = Field(default=DEFAULT_HNSW_EF_CONSTRUCTION, ge=10, le=4096)
    # Candidate list while searching: search time against recall.
    hnsw_ef_runtime: int = Field(default=DEFAULT_HNSW_EF_RUNTIME, ge=10, le=4096)
    # A partition (fingerprint) this small is scanned exactly; 0: always the graph, with
    # RediSearch's own hybrid policy; unset: EXACT_SCAN_BUDGET_VALUES / dimensions.
    exact_scan_max_entries: int | None = Field(default=None, ge=0)
    # How old a partition's count may be before it is counted again (in the background).
    partition_count_refresh_seconds: float = Field(
        default=DEFAULT_PARTITION_COUNT_REFRESH_SECONDS, gt=0, le=86_400
    )

    def exact_scan_limit(self, dimensions: int) -> int:
        """Largest partition scanned exactly, for vectors of `dimensions`."""
        if self.exact_scan_max_entries is not None:
            return self.exact_scan_max_entries
        return EXACT_SCAN_BUDGET_VALUES // max(1, dimensions)
