"""What the stages return: values, each made once by one stage and read by the runner.

    classify  -> Verdict
    exact     -> Hit | Miss
    semantic  -> Hit | Miss (with its diagnostics and the query embedding it made)
    memory    -> MemoryInjection (with the query embedding it made or reused)

The runner turns them into one `Decision` (`gateway/pipeline/decision.py`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from gateway.pipeline.reasons import Layer, Reason
from gateway.storage.protocols import CachedCompletion, SemanticEntry


@dataclass(frozen=True, slots=True)
class Verdict:
    """The classify stage's answer: None `reason` means the request may use the cache."""

    reason: Reason | None = None
    rule: str | None = None  # the classifier rule that fired (decision record)

    @property
    def cacheable(self) -> bool:
        return self.reason is None


CACHEABLE = Verdict()


@dataclass(frozen=True, slots=True)
class QueryEmbedding:
    """A text and its vector, embedded once per request and reused by whichever of the
    semantic and memory stages runs second, when it needs the same text."""

    text: str
    vector: Any


@dataclass(frozen=True, slots=True)
class SemanticDiagnostics:
    """Why the semantic layer decided as it did (no prompt text: decision record)."""

    similarity: float | None = None  # calibrated, of the candidate that decided
    cosine: float | None = None  # raw cosine of the served candidate's ask
    # On a semantic hit, what separated the asks (`reorder`, `synonym`, `template`...)
    difference: str | None = None
    review_verdict: str | None = None  # accepted | rejected | unavailable
    mismatch_kinds: tuple[str, ...] = ()
    # adaptive statistics (`gateway/adaptive/`): the candidates below the serving
    # threshold, best first, left for the shadow check after the response; the ask's
    # language
    adaptive_candidates: tuple[tuple[SemanticEntry, float], ...] = ()
    # the best candidate at or above the floor refused for a hard entity mismatch: a
    # pair known to be different (`adaptive/known_different.py`)
    adaptive_different: tuple[SemanticEntry, float] | None = None
    adaptive_language: str | None = None


NO_DIAGNOSTICS = SemanticDiagnostics()


@dataclass(frozen=True, slots=True)
class Hit:
    """A stored answer that may serve this request."""

    entry: CachedCompletion
    layer: Layer  # EXACT or SEMANTIC
    diagnostics: SemanticDiagnostics = NO_DIAGNOSTICS
    query_embedding: QueryEmbedding | None = None


@dataclass(frozen=True, slots=True)
class Miss:
    """No stored answer may serve this request, and why."""

    reason: Reason
    diagnostics: SemanticDiagnostics = NO_DIAGNOSTICS
    query_embedding: QueryEmbedding | None = None
    # a matching entry was found but could not answer this request (`serve_check`)
    entry_refused: bool = False


Lookup = Hit | Miss


@dataclass(frozen=True, slots=True)
class MemoryInjection:
    """What the memory stage did: the body to forward (None: unchanged), tokens of the
    injected block (0: none), how many items, and why nothing was injected."""

    body: dict[str, Any] | None = None
    tokens: int = 0
    items: int = 0
    note: str | None = None
    query_embedding: QueryEmbedding | None = None
    # `x-gateway-task`: what became of the named task (task_state.py); None: none named
    task_outcome: str | None = None
    # The working-memory budget (policy `working_memory`); None: it was off
    dropped_messages: int | None = None
    truncated_tool_results: int = 0
    # Set when only tenant knowledge was injected and the policy lets such answers be
    # shared (`knowledge_digest.py`); None otherwise.
    knowledge_digest: str | None = None


NO_MEMORY = MemoryInjection()


@dataclass(slots=True)
class Timings:
    """Milliseconds per stage of one request, written by the runner and the stages it
    hands it to (decision record `stages_ms`)."""

    ms: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.ms[stage] = round((time.perf_counter() - start) * 1000, 3)

    def since(self, stage: str, start: float) -> None:
        self.ms[stage] = round((time.perf_counter() - start) * 1000, 3)
