"""`storage.vector_index`: how the Redis semantic index builds and searches its HNSW
graph. Plain data (no Redis import), validated at start-up like the rest of the config.

`hnsw_m` and `hnsw_ef_construction` shape the graph and apply when the index is
created: an existing index keeps the values it was created with (drop it, or change
`storage.redis_prefix`, to rebuild with new ones). `hnsw_ef_runtime` is sent with every
query and applies at once. The embedded backend searches exactly and ignores all three.
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


class VectorIndexSettings(BaseModel):
    """HNSW parameters of the Redis semantic index."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Edges per node: memory (~8 bytes per edge and layer-0 node gets 2x) and recall.
    hnsw_m: int = Field(default=DEFAULT_HNSW_M, ge=4, le=128)
    # Candidate list while inserting: build time against graph quality.
    hnsw_ef_construction: int = Field(default=DEFAULT_HNSW_EF_CONSTRUCTION, ge=10, le=4096)
    # Candidate list while searching: search time against recall.
    hnsw_ef_runtime: int = Field(default=DEFAULT_HNSW_EF_RUNTIME, ge=10, le=4096)
