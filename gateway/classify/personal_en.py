"""English personal requests: the answer is about the asker's own records.

"What's my balance?", "where is my order?", "our team's roadmap": another user asking the
same words needs a different answer. Generic possessions ("my code", "my essay") are
not records and stay cacheable: the lexicon lists record nouns only.
"""

from __future__ import annotations

import re

from gateway.classify.lexicon_en import OWNERS, PERSONAL_RECORDS, alternation


class EnglishPersonalRules:
    def __init__(self) -> None:
        records = alternation(PERSONAL_RECORDS)
        self._personal = re.compile(
            rf"\b(?:my|our|mine)\s+(?:[\w'&-]+\s+){{0,3}}?(?:{records})\b(?!\s+(?:of|for)\s+"
            rf"(?:a|an)\b)|\b(?:our|my)\s+(?:{OWNERS})(?:'s)?\b|"
            r"\bhow much (?:money )?(?:do|did|have|will) (?:i|we) (?:have|owe|spend|spent|earn|"
            r"earned|make|made|save|saved|get|got)\b|\b(?:am|are) (?:i|we) eligible\b|"
            r"\b(?:do|did) i (?:have|owe) (?:any|enough)\b|\bwhere(?:'s| is| are) my\b|"
            r"\bwhen (?:is|are|will|does|do) my\b"
        )

    def personal(self, text: str) -> str | None:
        """Rule name when `text` (normalised, lower-cased) is about the asker's records."""
        return "en.personal.record" if self._personal.search(text) else None
