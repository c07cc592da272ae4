"""A bounded memo of `features.analyse`, owned by one local pair reviewer.

The structure guard runs the pair model on every candidate above the review band, so a
stored candidate's text is analysed again for every query it meets, and a repeated
query each time it comes. `analyse` is a pure function of the text, so its result is
kept for short texts. Analyses hold no tenant data beyond the text itself and are only
ever read (the pair features combine them into new objects).
"""

from __future__ import annotations

from gateway.bounded_lru import BoundedLRU
from gateway.review.features import PairText, analyse

# The semantic stage compares asks of at most `semantic_cache.max_query_chars` (300 by
# default) characters. Longer texts (offline evaluation, training) are analysed each time
# so the memo stays small: a 600-character text holds ~2,000 n-grams.
DEFAULT_MAX_ENTRIES = 2048
DEFAULT_MAX_TEXT_CHARS = 600


class AnalysedTexts:
    """Least-recently-used map text -> `PairText`. Used on the event loop (no lock)."""

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    ) -> None:
        self._max_text_chars = max_text_chars
        self._texts: BoundedLRU[str, PairText] = BoundedLRU(max_entries)

    def __len__(self) -> int:
        return len(self._texts)

    def of(self, text: str) -> PairText:
        found = self._texts.get(text)
        if found is not None:
            return found
        analysed = analyse(text)
        if len(text) <= self._max_text_chars:
            self._texts.put(text, analysed)
        return analysed
