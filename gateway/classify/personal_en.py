"""English personal requests: the answer is about the asker's own records.

"What's my balance?", "where is my order?", "our team's roadmap": another user asking the
same words needs a different answer. Generic possessions ("my code", "my essay") are
not records and stay cacheable: the lexicon (`gateway/rules/data/en/lexicon.yaml`,
`personal_records`) lists record nouns only; the rule is `en/personal.yaml`.
"""

from __future__ import annotations

from gateway.rules.compile import RuleBook


class EnglishPersonalRules:
    def __init__(self, rule_book: RuleBook | None = None) -> None:
        """Patterns and word lists from the rule files (`gateway/rules/data/`)."""
        book = rule_book if rule_book is not None else RuleBook.packaged()
        self._personal = book.file("en/personal").pattern("en.personal.record")

    def personal(self, text: str) -> str | None:
        """Rule name when `text` (normalised, lower-cased) is about the asker's records."""
        return "en.personal.record" if self._personal.search(text) else None
