"""What the semantic stage's walk over its candidates found so far (one lookup's)."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.pipeline.reasons import Reason
from gateway.pipeline.values import SemanticDiagnostics
from gateway.storage.protocols import SemanticEntry


@dataclass(slots=True)
class SemanticWalk:
    """What the walk over the candidates found so far (one lookup's, local)."""

    reason: Reason | None = None
    similarity: float | None = None
    review_verdict: str | None = None
    mismatch_kinds: tuple[str, ...] = ()
    adaptive_candidates: tuple[tuple[SemanticEntry, float], ...] = ()
    adaptive_different: tuple[SemanticEntry, float] | None = None
    adaptive_language: str | None = None
    entry_refused: bool = False
    cosine: float | None = None
    difference: str | None = None

    def diagnostics(self) -> SemanticDiagnostics:
        return SemanticDiagnostics(
            similarity=self.similarity,
            cosine=self.cosine,
            difference=self.difference,
            review_verdict=self.review_verdict,
            mismatch_kinds=self.mismatch_kinds,
            adaptive_candidates=self.adaptive_candidates,
            adaptive_different=self.adaptive_different,
            adaptive_language=self.adaptive_language,
        )
