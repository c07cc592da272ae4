"""Word lists for the near-miss term check (`terms.py`): what is not a content word, and
which content words say the same. Data (`gateway/rules/data/en/terms.yaml`,
`zh/terms.yaml`), loaded on first use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from gateway.entities.packaged import PackagedTables
from gateway.rules.compile import RuleBook


@dataclass(frozen=True, slots=True)
class TermLexicon(PackagedTables):
    """The term check's word lists, by the names `terms.py` uses."""

    EN_STOPWORDS: frozenset[str]
    EN_IRREGULAR: Mapping[str, str]
    # Groups of English words (base forms) that ask the same thing in a request.
    EN_SYNONYMS: tuple[frozenset[str], ...]
    ZH_FUNCTION_WORDS: frozenset[str]
    # Character pairs whose swap reverses a request: "左耳朵疼" / "右耳朵疼".
    ZH_ANTONYMS: frozenset[frozenset[str]]
    ZH_VARIANTS: tuple[frozenset[str], ...]
    EN_QUALIFIERS: frozenset[str]
    ZH_QUALIFIERS: frozenset[str]

    @classmethod
    def load(cls, book: RuleBook) -> Self:
        english, chinese = book.file("en/terms"), book.file("zh/terms")
        return cls(
            EN_STOPWORDS=frozenset(english.words("stopwords")),
            EN_IRREGULAR=english.texts("irregular"),
            EN_SYNONYMS=tuple(frozenset(group.split()) for group in english.words("synonyms")),
            ZH_FUNCTION_WORDS=frozenset(chinese.words("function_words")),
            ZH_ANTONYMS=frozenset(frozenset(pair) for pair in chinese.words("antonyms")),
            ZH_VARIANTS=tuple(frozenset(group.split()) for group in chinese.words("variants")),
            EN_QUALIFIERS=frozenset(english.words("qualifiers")),
            ZH_QUALIFIERS=frozenset(chinese.words("qualifiers")),
        )
