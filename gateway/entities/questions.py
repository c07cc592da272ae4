"""What a question asks: how many questions (English), and which part of a phrase (Chinese).

"Where and how can I renew my passport?" asks two questions; an answer stored for
"Where can I renew my passport?" answers one of them. The two embed close enough for the
review band (0.87 calibrated) and the reviewer took them for the same question. English
only, and only coordinated question words ("where and how", "why/how", "what or
which"): a second question word elsewhere is usually a relative ("how do I know what to
eat"), which says nothing about how many questions are asked.

The comparison is one-way, like a stored answer's coverage: a question asking more than
the stored one is refused; a question asking less ("Where can I...?" against a stored
"Where and how can I...?") is not.

Chinese asks about one character of a phrase with "X的Y是什么意思" (冰释前嫌的释是什么意思:
what does 释 mean in 冰释前嫌), which is another question than "X是什么意思" (what does
the idiom mean) and than the same phrase's other characters, yet the two embed as close
as paraphrases (up to 0.95 calibrated). On LCQMC dev, 111 of the 114 pairs in which one
side asks about a character and the other about the phrase or another character are
labelled different. That check is two-way: neither answer serves the other question. The
same holds for a question about a character itself ("从字怎么组词" is not "为字怎么组词";
为 and 从 are function characters everywhere else, so no other check sees them).
"""

from __future__ import annotations

import re

from gateway.entities.slots import TextSlots
from gateway.entities.text import joined

_WH = r"what|where|when|why|how|who|which|whom|whose"
_COORDINATED = re.compile(rf"\b({_WH})\s*,?\s*(?:and|or|&|/)\s*({_WH})\b")
_HAN = "\u4e00-\u9fff"
# "X字怎么组词", "X字的拼音": a question about the character X itself.
_CHARACTER_ASKED = re.compile(
    rf"(?:^|[^{_HAN}])[\"'‘“「]?([{_HAN}])[\"'’”」]?字(?=怎么组词|组词|怎么读|的?读音|的?拼音|"
    r"的?笔顺|的?部首|是什么偏旁|怎么写|能组什么词|可以组什么词)"
)
# X的Y(字)(是|指)什么意思, where Y (one or two characters) is part of X.
_PART_OF_PHRASE = re.compile(
    rf"([{_HAN}]{{2,}})的[\"'‘“「]?([{_HAN}]{{1,2}}?)[\"'’”」]?字?(?:是|指|表示)?(?:什么|啥)意思"
)


def coordinated_question_words(text: str) -> frozenset[str]:
    """Question words joined by and/or in a normalised, lower-case English text."""
    return frozenset(word for pair in _COORDINATED.findall(text) for word in pair)


def asked_parts(text: str) -> frozenset[str]:
    """The characters a normalised Chinese text asks about: the meaning of a part of a
    phrase, or a character itself (its words, reading, strokes)."""
    parts = {
        match.group(2)
        for match in _PART_OF_PHRASE.finditer(text)
        if all(char in match.group(1) for char in match.group(2))
    }
    parts.update(match.group(1) for match in _CHARACTER_ASKED.finditer(text))
    return frozenset(parts)


def compare_questions(query: TextSlots, candidate: TextSlots) -> tuple[str, str] | None:
    """The question words the query coordinates that the candidate does not ask, or,
    in Chinese, a different part of a phrase asked about."""
    if query.language == "zh" and candidate.language == "zh":
        query_parts, candidate_parts = asked_parts(query.surface), asked_parts(candidate.surface)
        if query_parts == candidate_parts:
            return None
        return joined(query_parts) or "-", joined(candidate_parts) or "-"
    if query.language != "en" or candidate.language != "en":
        return None
    asked = coordinated_question_words(query.surface)
    if not asked:
        return None
    answered = asked & set(candidate.tokens)
    if answered == asked:
        return None
    return joined(asked), joined(answered) or "-"
