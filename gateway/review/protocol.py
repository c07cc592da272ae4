"""What the semantic stage needs from a reviewer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

# What a reviewer is (`Reviewer.kind`). "local": the shipped pair model, in-process and
# free, reading the two requests only; it vets candidates at or above the serving
# threshold. "model": a chat model through litellm (`semantic.reviewer: <model_name>`),
# slower and paid per token, reading the stored answer too; only it is sent the review
# band below the threshold (policy `semantic_cache.review.band_floor`).
LOCAL = "local"
MODEL = "model"


@dataclass(frozen=True, slots=True)
class ReviewVerdict:
    same_meaning: bool
    score: float  # the reviewer's confidence that the two mean the same, 0..1
    reviewer: str  # which reviewer decided, for the decision record


class Reviewer(Protocol):
    name: str
    kind: str  # LOCAL or MODEL

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
        """Judge whether `query` can be answered with the answer stored for `candidate`.

        `similarity` is on the gateway's calibrated scale. `stored_answer`, when the
        policy shows it, is the text of that answer: a reviewer that can read it judges
        whether it answers `query`, not only whether the two requests match.

        `tenant` is whose request is reviewed, and `budget_tokens` the tokens that
        tenant's reviews may spend per hour (policy
        `semantic_cache.review.tokens_per_tenant_per_hour`; None: unbounded). A reviewer
        that spends tokens ("model") charges them to the tenant and raises `ReviewError`
        once the budget is spent; a local one ignores both.

        Raises on failure; the caller applies the timeout and treats errors as
        `review_unavailable`.
        """
        ...
