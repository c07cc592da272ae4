"""English time-sensitive questions: the answer depends on when it is asked.

Three kinds of evidence, strongest first:

- words that tie the answer to now ("today", "weather", "stock price"): always;
- words relative to now ("current", "latest", "next season", "how old is"): unless an
  explicit year pins the question ("who was the current president in 2011");
- facts that change without saying so: office holders ("who is the governor of ..."),
  records ("who has the most ..."), tallies ("how many goals has ... scored"), recurring
  winners ("who won the super bowl"), figures (prices, salaries, populations): unless a
  year, a numbered season or "the first ..." pins them.

Last, relative DATE/TIME entities from spaCy ("in two weeks", "this coming spring");
fixed historical dates ("in 1999") do not count. The parse is taken only when the rules
above found nothing.

The patterns are data (`gateway/rules/data/en/time.yaml`); this module is the order in
which they are read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gateway.rules.compile import RuleBook

# A long turn is judged on its first and last sentences, where questions are asked.
_EDGE_SENTENCES = 4


class EnglishTimeRules:
    """Compiled English time-sensitivity rules; one instance per classifier."""

    def __init__(self, rule_book: RuleBook | None = None) -> None:
        """Patterns and word lists from the rule files (`gateway/rules/data/`)."""
        book = rule_book if rule_book is not None else RuleBook.packaged()
        rules = book.file("en/time")
        self._strong = rules.pattern("en.time.lexicon")
        self._relative = rules.pattern("en.time.relative")
        self._now = rules.pattern("en.time.now")
        self._current = rules.pattern("en.time.current")
        self._still = rules.pattern("en.time.still")
        self._year = rules.pattern("en.time.year")
        self._anchor = rules.pattern("en.time.anchor")
        self._sentences = rules.pattern("en.time.sentences")
        self._relative_date = rules.pattern("en.time.relative_date")
        self._volatile: tuple[tuple[str, re.Pattern[str]], ...] = (
            ("en.time.office", rules.pattern("en.time.office")),
            ("en.time.status", rules.pattern("en.time.status")),
            ("en.time.record", rules.pattern("en.time.record")),
            ("en.time.tally", rules.pattern("en.time.tally")),
            ("en.time.recurring", rules.pattern("en.time.recurring")),
            ("en.time.figure", rules.pattern("en.time.figure")),
        )

    def time(self, text: str, doc: Callable[[], Any] | None) -> str | None:
        """Rule name when the answer to `text` (normalised, lower-cased) depends on when
        it is asked. `doc` parses the turn on demand (None: no English parse)."""
        if self._strong.search(text):
            return "en.time.lexicon"
        sentences = [m.group().strip() for m in self._sentences.finditer(text)]
        if len(sentences) > 2 * _EDGE_SENTENCES:
            sentences = sentences[:_EDGE_SENTENCES] + sentences[-_EDGE_SENTENCES:]
        for sentence in sentences:
            rule = self._sentence(sentence)
            if rule is not None:
                return rule
        # Entities are the costly part (docs/measurements.md#relative-dates-in-english):
        # parse only when a relative date word could be in one.
        if doc is not None and self._relative_date.search(text):
            for ent in doc().ents:
                if ent.label_ in ("DATE", "TIME"):
                    span = ent.text.lower()
                    if self._relative_date.search(span) and not self._year.search(span):
                        return "en.time.entity"
        return None

    def _sentence(self, sentence: str) -> str | None:
        if not self._year.search(sentence) and (
            self._relative.search(sentence)
            or self._current.search(sentence)
            or self._now.search(sentence)
            or self._still.search(sentence)
        ):
            return "en.time.relative"
        if not self._anchor.search(sentence):
            for rule, pattern in self._volatile:
                if pattern.search(sentence):
                    return rule
        return None
