"""What the semantic stage needs from a reviewer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ReviewVerdict:
    same_meaning: bool
    score: float  # the reviewer's confidence that the two mean the same, 0..1
    reviewer: str  # which reviewer decided, for the decision record


class Reviewer(Protocol):
    name: str

    async def review(
        self, query: str, candidate: str, similarity: float, stored_answer: str | None = None
    ) -> ReviewVerdict:
        """Judge whether `query` can be answered with the answer stored for `candidate`.

        `similarity` is on the gateway's calibrated scale. `stored_answer`, when the
        policy shows it, is the text of that answer: a reviewer that can read it judges
        whether it answers `query`, not only whether the two requests match. Raises on
        failure; the caller applies the timeout and treats errors as
        `review_unavailable`.
        """
        ...
