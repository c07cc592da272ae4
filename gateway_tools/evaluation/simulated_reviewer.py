"""A simulated chat-model reviewer for `gateway eval pairs --reviewer-errors`.

It stands in for `semantic.reviewer: <model_name>` (kind "model": the semantic stage
sends it the review band [policy `semantic_cache.review.band_floor`, the threshold) and
the candidates above it that a local check refused) with known error rates: asked about
a pair labelled duplicate it says "same" with probability `accept_dup`, about any other
pair with probability `accept_nondup`. Each answer is drawn from a hash of the two texts,
so a run is deterministic and a pair gets the same answer in every rule and protocol.
A pair it does not know (the pool protocol asks about other stored entries too) counts
as not a duplicate.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Protocol

from gateway.review.protocol import MODEL, ReviewVerdict

# Texts -> label, either order: (stored, asked) and (asked, stored).
PairLabels = Mapping[tuple[str, str], bool]


class Labelled(Protocol):
    """A labelled pair (`gateway_tools.evaluation.pairs.LabeledPair`)."""

    @property
    def first(self) -> str: ...

    @property
    def second(self) -> str: ...

    @property
    def duplicate(self) -> bool: ...


def pair_labels(pairs: Iterable[Labelled]) -> dict[tuple[str, str], bool]:
    """The labels of a set's pairs, keyed by both orders of the two texts (a text pair
    labelled both ways reads as a duplicate)."""
    labels: dict[tuple[str, str], bool] = {}
    for pair in pairs:
        for key in ((pair.first, pair.second), (pair.second, pair.first)):
            labels[key] = labels.get(key, False) or pair.duplicate
    return labels


def draw(query: str, candidate: str) -> float:
    """A uniform number in [0, 1) fixed by the two texts (order-free)."""
    low, high = sorted((query, candidate))
    digest = hashlib.sha256(f"{low}\x00{high}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class SimulatedReviewer:
    """`Reviewer` (kind "model") that answers from the labels with the given accept
    rates; `asked` counts its answers by (label, verdict)."""

    def __init__(self, labels: PairLabels, accept_dup: float, accept_nondup: float) -> None:
        for rate in (accept_dup, accept_nondup):
            if not 0.0 <= rate <= 1.0:
                raise ValueError("reviewer accept rates must be in [0, 1]")
        self._labels = labels
        self.accept_dup = accept_dup
        self.accept_nondup = accept_nondup
        self.name = f"simulated-model(dup {accept_dup:g}, non-dup {accept_nondup:g})"
        self.kind = MODEL
        self.asked: Counter[tuple[str, str]] = Counter()

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
        duplicate = self._labels.get((query, candidate), False)
        rate = self.accept_dup if duplicate else self.accept_nondup
        same = draw(query, candidate) < rate
        label = "duplicate" if duplicate else "non_duplicate"
        self.asked[(label, "same" if same else "different")] += 1
        return ReviewVerdict(same_meaning=same, score=float(same), reviewer=self.name)

    def summary(self) -> dict[str, object]:
        """How often it was asked, by label and answer."""
        return {
            "accept_dup": self.accept_dup,
            "accept_nondup": self.accept_nondup,
            "asked": sum(self.asked.values()),
            "answers": {
                f"{label}/{verdict}": n for (label, verdict), n in sorted(self.asked.items())
            },
        }
