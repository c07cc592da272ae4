"""The knowledge base's policy section (`knowledge:` in a policy file)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gateway.strict_model import StrictModel


class KnowledgeChunkingPolicy(StrictModel):
    """How `POST /v1/knowledge` cuts a document into items: paragraphs, then sentences,
    packed up to `max_tokens` (tiktoken `cl100k_base`), each chunk repeating the last
    sentences of the one before up to `overlap_tokens`, so that a fact spanning a cut is
    whole in one of them."""

    max_tokens: int = Field(default=200, ge=16, le=4000)
    overlap_tokens: int = Field(default=40, ge=0, le=1000)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> KnowledgeChunkingPolicy:
        if self.overlap_tokens >= self.max_tokens:
            raise ValueError("overlap_tokens must be below max_tokens")
        return self


class KnowledgeLimitsPolicy(StrictModel):
    """Caps per tenant, so one tenant's knowledge base (which every turn of its users
    ranks) stays bounded. A write past a cap is refused with 409
    `knowledge_limit_reached`, an item over `max_bytes_per_item` with 413."""

    max_items_per_tenant: int = Field(default=10_000, ge=1, le=1_000_000)
    # UTF-8 bytes of an item's content, title, source and metadata (JSON).
    max_bytes_per_item: int = Field(default=16 * 1024, ge=256, le=1 << 24)


class KnowledgePolicy(StrictModel):
    """The tenant knowledge base (`/v1/knowledge`): documents and rules shared by every
    user of the tenant, retrieved each turn next to the user's memories and ranked
    together with them by score (see README, "Knowledge base")."""

    # Retrieved only when the tenant (in the request's namespace) has items.
    enabled: bool = True
    # 10: at the default 512-token budget, knowledge alone recalls as much LoCoMo
    # evidence as memories at their 15 (README, "Knowledge and memories together").
    retrieve_top_k: int = Field(default=10, ge=1, le=100)
    # With `memory.bypass_cache_when_injected` (the default): a request into which only
    # tenant knowledge was injected stays cacheable, keyed by the digest of the items
    # injected (README, "Knowledge and the cache"). false: any injected knowledge
    # bypasses the shared cache, like a user's memories (`memory_personalized`).
    cache_answers: bool = True
    # With `cache_answers`: how many knowledge items (best first) a request given
    # knowledge alone is sent, so that paraphrases of a question are given the same
    # items and share one answer (more: more context, fewer reuses).
    cache_answers_top_n: int = Field(default=3, ge=1, le=100)
    # Who may add and delete: only admin keys (naming the tenant with
    # `x-gateway-tenant`), or also the tenant's own keys.
    writers: Literal["admin", "any_key"] = "admin"
    write_guard: Literal["reject", "quarantine"] = "reject"
    chunking: KnowledgeChunkingPolicy = Field(default_factory=KnowledgeChunkingPolicy)
    limits: KnowledgeLimitsPolicy = Field(default_factory=KnowledgeLimitsPolicy)
