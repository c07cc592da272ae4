"""How many questions a text asks.

"Where and how can I renew my passport?" asks two questions; an answer stored for
"Where can I renew my passport?" answers one of them. The two embed close enough for the
review band (0.87 calibrated) and the reviewer took them for the same question. English
only, and only coordinated question words ("where and how", "why/how", "what or
which"): a second question word elsewhere is usually a relative ("how do I know what to
eat"), which says nothing about how many questions are asked.

The comparison is one-way, like a stored answer's coverage: a question asking more than
the stored one is refused; a question asking less ("Where can I...?" against a stored
"Where and how can I...?") is not.
"""

from __future__ import annotations

import re

from gateway.semantic.slots import TextSlots
from gateway.semantic.text import joined

_WH = r"what|where|when|why|how|who|which|whom|whose"
_COORDINATED = re.compile(rf"\b({_WH})\s*,?\s*(?:and|or|&|/)\s*({_WH})\b")


def coordinated_question_words(text: str) -> frozenset[str]:
    """Question words joined by and/or in a normalised, lower-case English text."""
    return frozenset(word for pair in _COORDINATED.findall(text) for word in pair)


def compare_questions(query: TextSlots, candidate: TextSlots) -> tuple[str, str] | None:
    """The question words the query coordinates that the candidate does not ask."""
    if query.language != "en" or candidate.language != "en":
        return None
    asked = coordinated_question_words(query.surface)
    if not asked:
        return None
    answered = asked & set(candidate.tokens)
    if answered == asked:
        return None
    return joined(asked), joined(answered) or "-"
