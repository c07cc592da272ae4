"""One user turn in the forms the classifier's rules read, computed once per request."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gateway.classify.messages import normalize
from gateway.nlp import TextAnalyzer, detect_language

# Long turns (pasted documents) are judged on their head and tail, where instructions and
# questions sit; this keeps the rules well under a millisecond whatever the length.
_HEAD_CHARS = 1200
_TAIL_CHARS = 1200
# Rules that need the tagger (follow-up pronouns, date entities) are about short turns; a
# longer one brings its own context, so it is not parsed here.
_PARSE_LIMIT_CHARS = 1000


class TextView:
    """One turn in the forms the rules read, computed once; the parse only on demand."""

    __slots__ = (
        "_analyzer",
        "_doc",
        "has_cjk",
        "has_latin",
        "language",
        "lower",
        "normalized",
        "original",
    )

    def __init__(
        self, text: str, analyzer: TextAnalyzer, cjk: re.Pattern[str], latin: re.Pattern[str]
    ) -> None:
        self.original = text
        if len(text) > _HEAD_CHARS + _TAIL_CHARS:
            text = f"{text[:_HEAD_CHARS]}\n{text[-_TAIL_CHARS:]}"
        self.normalized = normalize(text)
        self.lower = self.normalized.lower()
        self.has_cjk = cjk.search(self.normalized) is not None
        self.has_latin = latin.search(self.normalized) is not None
        self.language = detect_language(self.normalized)
        self._analyzer = analyzer
        self._doc: Any = None

    def doc(self) -> Any | None:
        """The spaCy parse of the turn, or None for long turns (see _PARSE_LIMIT_CHARS)."""
        if len(self.original) > _PARSE_LIMIT_CHARS:
            return None
        if self._doc is None:
            # The original text: the analyzer memoises by text, and the entity
            # comparison parses the same turn.
            self._doc = self._analyzer.doc(self.original)
        return self._doc

    def tagged(self) -> Any | None:
        """The parse with tags only (no entities), or None for long turns."""
        if len(self.original) > _PARSE_LIMIT_CHARS:
            return None
        if self._doc is not None:
            return self._doc
        return self._analyzer.tagged(self.original)

    def tokens(self) -> Any | None:
        """The tokens `tagged` would have, without running a model; None for long turns."""
        if len(self.original) > _PARSE_LIMIT_CHARS:
            return None
        return self._analyzer.tokens(self.original)

    def english_doc(self) -> Callable[[], Any] | None:
        """The parse for short English turns; Chinese-pipeline docs have no English
        entities."""
        if self.language != "en" or len(self.original) > _PARSE_LIMIT_CHARS:
            return None
        return self.doc
