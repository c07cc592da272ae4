"""The decision record: what the gateway did with one request and why. One per request,
kept in memory for `/admin/decisions`, counted into metrics and stats, and written as
one log line. Built by the pipeline (`gateway/pipeline/decision.py`); no prompt text
unless the policy's `telemetry.record_prompts` enables it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    request_id: str
    at: float  # epoch seconds, when the request finished
    tenant: str
    model: str
    stream: bool
    layer: str
    reason: str | None
    status: int
    stored: bool
    coalesced: bool
    similarity: float | None
    review_verdict: str | None
    mismatch_kinds: tuple[str, ...]
    classifier_rule: str | None
    tokens_saved: int
    cost_saved_usd: float
    memory_tokens: int
    memory_items: int
    memory_note: str | None
    total_ms: float
    cache_key: str | None = None  # the exact-cache key: `POST /admin/cache/purge {"key"}`
    stages_ms: dict[str, float] = field(default_factory=dict)
    # How the last user turn was split (rule, material blocks, attachments, ask length):
    # counts only, never text. None when no stage parsed it (a bypass before parsing).
    turn: dict[str, Any] | None = None
    prompt: str | None = None
    # On a semantic hit: the raw cosine and what separated the two asks (a class code)
    cosine: float | None = None
    difference: str | None = None

    def to_json(self) -> dict[str, Any]:
        value = {
            "request_id": self.request_id,
            "at": round(self.at, 3),
            "tenant": self.tenant,
            "model": self.model,
            "stream": self.stream,
            "layer": self.layer,
            "reason": self.reason,
            "status": self.status,
            "stored": self.stored,
            "coalesced": self.coalesced,
            "similarity": self.similarity,
            "cosine": self.cosine,
            "difference": self.difference,
            "review_verdict": self.review_verdict,
            "mismatch_kinds": list(self.mismatch_kinds),
            "classifier_rule": self.classifier_rule,
            "tokens_saved": self.tokens_saved,
            "cost_saved_usd": self.cost_saved_usd,
            "memory_tokens": self.memory_tokens,
            "memory_items": self.memory_items,
            "memory_note": self.memory_note,
            "total_ms": self.total_ms,
            "cache_key": self.cache_key,
            "stages_ms": dict(self.stages_ms),
            "turn": None if self.turn is None else dict(self.turn),
        }
        if self.prompt is not None:
            value["prompt"] = self.prompt
        return value
