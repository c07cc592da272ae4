"""The policy's `memory` section: retrieval ranking, the session knowledge cache, capture,
per-user limits, placement, kinds and retention (see the README's policy reference)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gateway.policy.memory_lifecycle import KindHalfLives, MemoryRetentionPolicy
from gateway.strict_model import StrictModel


class MemoryRankingPolicy(StrictModel):
    """How retrieval scores a memory (see `gateway/memory/retrieval.py`)."""

    # No longer used by the ranking, which orders by the calibrated relevance model
    # (`gateway/memory/relevance.py`, fitted on LoCoMo 0-2, checked on 3-4); kept so
    # that existing policy files stay valid.
    dense_weight: float = Field(default=0.3, ge=0, le=1)
    keyword_weight: float = Field(default=0.7, ge=0, le=1)
    # Raw embedder cosines mapped to [0, 1]: what unrelated texts score, and full marks.
    dense_floor: float = Field(default=0.2, ge=-1, lt=1)
    dense_ceiling: float = Field(default=0.8, gt=-1, le=1)
    recency_weight: float = Field(default=0.1, ge=0, le=1)
    recency_half_life_days: float = Field(default=30.0, gt=0)
    kind_half_life_days: KindHalfLives = Field(default_factory=KindHalfLives)
    access_weight: float = Field(default=0.05, ge=0, le=1)
    # Score multiplier for a fact outside its valid_from/valid_to window at the request
    # time (or a search's `as_of`); 0 (the default) leaves such facts out altogether.
    stale_factor: float = Field(default=0.0, ge=0, le=1)
    # On the calibrated relevance scale: memories with under a 0.5 % chance of being
    # evidence for the turn are not injected. Low on purpose: the token budget bounds
    # the block (docs/measurements.md#memory-retrieval-score-floor).
    min_score: float = Field(default=0.005, ge=0, le=1)

    @model_validator(mode="after")
    def _consistent(self) -> MemoryRankingPolicy:
        if self.dense_floor >= self.dense_ceiling:
            raise ValueError("dense_floor must be below dense_ceiling")
        if self.recency_weight + self.access_weight > 1:
            raise ValueError("recency_weight + access_weight must not exceed 1")
        if self.dense_weight + self.keyword_weight <= 0:
            raise ValueError("dense_weight and keyword_weight cannot both be 0")
        return self


class SessionMemoryPolicy(StrictModel):
    """The per-session knowledge cache (`x-gateway-session`)."""

    # On the calibrated relevance scale (P(evidence), `gateway/memory/relevance.py`).
    admit_min_score: float = Field(default=0.70, ge=0, le=1)
    # ...or among the turn's best `admit_top_k` holding `admit_min_shared_terms` of its
    # keyword terms: P >= 0.70 is rare with the shipped embedder (README, "Session
    # knowledge cache", for the measured precision of both ways). 0 turns this off.
    admit_top_k: int = Field(default=3, ge=0, le=100)
    admit_min_shared_terms: int = Field(default=2, ge=1, le=100)
    capacity: int = Field(default=30, ge=1, le=1000)
    inject_top_n: int = Field(default=15, ge=1, le=200)
    ttl_seconds: int = Field(default=3600, ge=1)


class MemoryCapturePolicy(StrictModel):
    """Store facts and decisions the user states, after each turn (rule-based)."""

    enabled: bool = False
    source: str = Field(default="capture", min_length=1, max_length=64)


class MemoryLimitsPolicy(StrictModel):
    """Caps per user (tenant + user), so that one user cannot grow the store, or the
    scope every one of their turns ranks, without bound. A write past a cap is refused
    with 409 `memory_limit_reached`; capture stops storing."""

    max_memories_per_user: int = Field(default=5000, ge=1, le=1_000_000)
    # UTF-8 bytes of content, source, tags and metadata, summed over the user's memories.
    max_bytes_per_user: int = Field(default=4 * 1024 * 1024, ge=1024, le=1 << 34)
    # How long an `Idempotency-Key` of a memory write is remembered.
    idempotency_ttl_seconds: int = Field(default=86_400, ge=60, le=30 * 86_400)


class MemoryPolicy(StrictModel):
    enabled: bool = True
    # The injected block never exceeds this, counted with the target model's tiktoken
    # encoding, header and message overhead included.
    max_memory_tokens: int = Field(default=512, ge=0, le=100_000)
    retrieve_top_k: int = Field(default=15, ge=1, le=100)
    ranking: MemoryRankingPolicy = Field(default_factory=MemoryRankingPolicy)
    session: SessionMemoryPolicy = Field(default_factory=SessionMemoryPolicy)
    # What to do with a memory that looks like a prompt injection or holds a secret:
    # refuse the write (422) or store it quarantined (listed, never injected).
    write_guard: Literal["reject", "quarantine"] = "reject"
    # Room left for the answer when the request sets no max_tokens: memory never
    # pushes prompt + answer past the model's context window.
    reserve_output_tokens: int = Field(default=1024, ge=0)
    # Used when neither the config's model_info nor litellm's model map knows the model.
    default_context_window_tokens: int = Field(default=8192, ge=256)
    embed_timeout_seconds: float = Field(default=1.0, gt=0, le=30)
    capture: MemoryCapturePolicy = Field(default_factory=MemoryCapturePolicy)
    # Memory is retrieved before the cache lookups; when some is injected (retrieval
    # found items above the floor, or the session holds some) the request skips the
    # shared cache (`bypass`, reason `memory_personalized`): an answer stored for
    # someone else never reached this user's memories ("allergic to penicillin").
    # false: look up first, and inject memory only into misses (hits are shared).
    bypass_cache_when_injected: bool = True
    limits: MemoryLimitsPolicy = Field(default_factory=MemoryLimitsPolicy)
    # Where the injected blocks (task state, memory) go. before_last_user: just before
    # the last user turn, so everything before it (system prompt, tools, earlier turns)
    # is byte-identical from one turn to the next and the provider's prompt cache keeps
    # matching it; after_system: right after the leading system/developer messages.
    placement: Literal["before_last_user", "after_system"] = "before_last_user"
    # Procedural memories (rules, instructions) are injected first, in the order they
    # were written, within this budget of their own; 0: never injected.
    procedural_budget_tokens: int = Field(default=256, ge=0, le=100_000)
    retention: MemoryRetentionPolicy = Field(default_factory=MemoryRetentionPolicy)
