"""Per-request state that flows through the pipeline stages."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from gateway.auth import Principal
from gateway.pipeline.reasons import Layer, Reason
from gateway.policy.models import Policy
from gateway.providers.protocol import UpstreamReport
from gateway.turn import ParsedTurn, last_user_turn_chars, parse_last_user_turn

# The last user turn is split in a worker thread above this many characters.
TURN_IN_THREAD_ABOVE_CHARS = 64 * 1024


@dataclass(frozen=True, slots=True)
class CacheControl:
    """The request's cache controls that the gateway honours: `Cache-Control` directives
    and the `x-gateway-cache-ttl` header (parsed in `gateway/api/cache_headers.py`)."""

    no_cache: bool = False  # skip lookups, still store
    no_store: bool = False  # never store this answer
    # `max-age=N`: serve only an entry at most N seconds old (None: any age)
    max_age_seconds: int | None = None
    # `x-gateway-cache-ttl: N`: this answer's entries expire after N seconds, within
    # the policy's bound (None: the layers' own `ttl_seconds`)
    ttl_seconds: int | None = None

    @classmethod
    def parse(cls, header: str | None, ttl_seconds: int | None = None) -> CacheControl:
        if not header:
            return cls(ttl_seconds=ttl_seconds)
        names: set[str] = set()
        max_ages: list[int] = []
        for part in header.split(","):
            name, _, value = part.strip().partition("=")
            name = name.strip().lower()
            names.add(name)
            value = value.strip().strip('"')
            # delta-seconds (RFC 9111): digits only; anything else is ignored, as an
            # HTTP cache ignores a directive it cannot read. Repeated: the strictest.
            if name == "max-age" and value.isascii() and value.isdigit() and len(value) <= 10:
                max_ages.append(int(value))
        return cls(
            no_cache="no-cache" in names,
            no_store="no-store" in names,
            max_age_seconds=min(max_ages) if max_ages else None,
            ttl_seconds=ttl_seconds,
        )


@dataclass(slots=True)
class ChatContext:
    request_id: str
    principal: Principal
    model: str
    body: dict[str, Any]
    policy: Policy
    cache_control: CacheControl = field(default_factory=CacheControl)
    # memory scope: `x-gateway-user` (else the body's `user`), `x-gateway-session`,
    # `x-gateway-namespace`
    user: str | None = None
    session: str | None = None
    namespace: str | None = None
    layer: Layer = Layer.MISS
    reason: Reason | None = None
    exact_key: str | None = None
    # semantic layer: what it looked at and why it decided (no prompt text in logs)
    fingerprint: str | None = None
    turn: ParsedTurn | None = None  # the last user turn: ask, material, attachments
    query_text: str | None = None  # the ask: what the semantic layer compares by meaning
    query_vector: Any = None
    similarity: float | None = None  # calibrated, of the candidate that decided
    review_verdict: str | None = None  # accepted | rejected | unavailable
    mismatch_kinds: tuple[str, ...] = ()
    # adaptive statistics (`gateway/adaptive/`): the candidates below the serving
    # threshold, best first, left for the shadow check after the response; the ask's
    # language; a `no-cache` request's own entry, read for the judge's error estimate
    adaptive_candidates: list[tuple[Any, float]] = field(default_factory=list)
    # the best candidate at or above the floor refused for a hard entity mismatch: a
    # pair known to be different (`adaptive/known_different.py`)
    adaptive_different: tuple[Any, float] | None = None
    adaptive_language: str | None = None
    prior_exact_read: asyncio.Future[Any] | None = None
    classifier_rule: str | None = None
    stored: bool = False
    # A matching entry was found but could not answer this request (`serve_check`).
    entry_refused: bool = False
    coalesced: bool = False  # answered with a concurrent identical request's answer
    # memory: tokens of the injected block (0: none), how many items, and why nothing
    # was injected when memory was attempted (decision record only)
    memory_tokens: int = 0
    memory_items: int = 0
    memory_note: str | None = None
    # what the provider call said besides the answer: the model that answered (a
    # fallback's name when one did) and its headers for the client
    upstream: UpstreamReport = field(default_factory=UpstreamReport)
    tokens_saved: int = 0
    saved_usage: dict[str, Any] | None = None  # the served entry's original usage
    served_age_seconds: int | None = None  # how old the served entry is (the `age` header)
    started_at: float = field(default_factory=time.perf_counter)
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def tenant(self) -> str:
        return self.principal.tenant

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def include_usage(self) -> bool:
        options = self.body.get("stream_options")
        return isinstance(options, dict) and bool(options.get("include_usage"))

    @property
    def cacheable(self) -> bool:
        return self.layer is not Layer.BYPASS

    @property
    def answered_by(self) -> str:
        """The model that answered: a fallback's `model_name` when one did, else the
        requested model (also for cache hits: an entry is stored under the key of the
        model that produced it)."""
        return self.upstream.model or self.model

    def cache_namespace(self) -> dict[str, str]:
        """What, besides the request, separates cache entries: the policy's version and
        declared versions, and the client's `x-gateway-namespace`."""
        return {**self.policy.cache_namespace(), "namespace": self.namespace or ""}

    async def prepare_turn(self) -> None:
        """Splits a long last user turn now, in a worker thread, so that the event loop
        serves other requests meanwhile (a 3 MB turn took ~200 ms to split); shorter
        ones are split in place when first needed (cheaper than the thread hop)."""
        messages = self.body.get("messages") or []
        if self.turn is None and last_user_turn_chars(messages) > TURN_IN_THREAD_ABOVE_CHARS:
            self.turn = await asyncio.to_thread(
                parse_last_user_turn, messages, self.policy.semantic_cache.max_query_chars
            )

    def parsed_turn(self) -> ParsedTurn:
        """The last user turn split into ask, material and attachments, parsed once and
        shared by the classifier (which judges the ask) and the semantic cache."""
        if self.turn is None:
            self.turn = parse_last_user_turn(
                self.body.get("messages") or [], self.policy.semantic_cache.max_query_chars
            )
        return self.turn

    def decide(self, layer: Layer, reason: Reason | None = None) -> None:
        self.layer = layer
        self.reason = reason

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings_ms[stage] = round((time.perf_counter() - start) * 1000, 3)

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started_at) * 1000, 3)
