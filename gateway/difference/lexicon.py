"""The difference analysis's word lists (`data/lexicon.yaml`), compiled once.

Loaded on first use (the semantic stage builds its analyser in the app's lifespan),
never at import. A phrase rewrite table is one regular expression per language, longest
phrase first, matched on word boundaries (English) or anywhere (Chinese)."""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import yaml

# bearing: refuses; preserving: rewording; content: a word cut as one unit but judged
# like any content word the lexicon does not know (Chinese compounds).
Meaning = Literal["bearing", "preserving", "content"]
DATA_PACKAGE = "gateway.difference.data"
LEXICON_RESOURCE = "lexicon.yaml"


class LexiconError(ValueError):
    """The lexicon file is malformed; the message names the section."""


@dataclass(frozen=True, slots=True)
class LanguageLexicon:
    # phrase (lower case) -> its replacement, applied before tokenising, in this order:
    contractions: Mapping[str, str]
    equivalents: Mapping[str, str]
    templates: Mapping[str, str]  # phrase -> "<name>"
    word_class: Mapping[str, str]  # token -> class name (first listed class wins)
    class_meaning: Mapping[str, Meaning]
    synonym_group: Mapping[str, int]  # word -> group id
    multi_char_words: tuple[str, ...]  # Chinese tokens longer than one character, longest first
    examples: tuple[tuple[str, str, str], ...]

    @property
    def words_by_first_char(self) -> Mapping[str, tuple[str, ...]]:
        return _by_first_char(self.multi_char_words)

    def meaning_of(self, token: str) -> tuple[str, Meaning] | None:
        """(class, meaning) of a token; None for a content word (unknown or compound)."""
        name = self.word_class.get(token)
        if name is None or self.class_meaning[name] == "content":
            return None
        return name, self.class_meaning[name]

    def synonyms(self, left: str, right: str) -> bool:
        group = self.synonym_group.get(left)
        return group is not None and group == self.synonym_group.get(right)


# eq=False: hashed by identity, so the compiled tables below are cached per lexicon.
@dataclass(frozen=True, slots=True, eq=False)
class Lexicon:
    en: LanguageLexicon
    zh: LanguageLexicon

    def rewrites(self) -> tuple[tuple[re.Pattern[str], Mapping[str, str]], ...]:
        """(pattern, table) in the order they apply: English contractions, equivalents
        and templates on word boundaries, then Chinese equivalents and templates."""
        return _rewrites(self)

    @staticmethod
    @cache
    def packaged() -> Lexicon:
        text = importlib.resources.files(DATA_PACKAGE).joinpath(LEXICON_RESOURCE).read_text("utf-8")
        return Lexicon.from_text(text)

    @staticmethod
    def from_text(text: str) -> Lexicon:
        data = yaml.safe_load(text)
        if not isinstance(data, dict) or set(data) != {"en", "zh"}:
            raise LexiconError("the lexicon has exactly two sections: en and zh")
        return Lexicon(en=_language(data["en"], "en"), zh=_language(data["zh"], "zh"))


@cache
def _rewrites(lexicon: Lexicon) -> tuple[tuple[re.Pattern[str], Mapping[str, str]], ...]:
    found = []
    for table, words in (
        (lexicon.en.contractions, False),
        (lexicon.en.equivalents, True),
        (lexicon.en.templates, True),
        (lexicon.zh.equivalents, False),
        (lexicon.zh.templates, False),
    ):
        pattern = _rewrite_pattern(tuple(sorted(table, key=len, reverse=True)), words)
        if pattern is not None:
            found.append((pattern, table))
    return tuple(found)


@cache
def _by_first_char(words: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    grouped: dict[str, list[str]] = {}
    for word in words:  # longest first already
        grouped.setdefault(word[0], []).append(word)
    return {first: tuple(group) for first, group in grouped.items()}


@cache
def _rewrite_pattern(phrases: tuple[str, ...], words: bool) -> re.Pattern[str] | None:
    if not phrases:
        return None
    alternatives = "|".join(re.escape(phrase).replace(r"\ ", r"\s+") for phrase in phrases)
    if words:
        return re.compile(rf"(?<![\w<])(?:{alternatives})(?![\w>])")
    return re.compile(alternatives)


def _language(section: Any, name: str) -> LanguageLexicon:
    if not isinstance(section, dict):
        raise LexiconError(f"{name}: not a mapping")
    templates = {
        str(phrase).lower(): f"<{canonical}>"
        for canonical, phrases in (section.get("templates") or {}).items()
        for phrase in phrases
    }
    word_class: dict[str, str] = {}
    meanings: dict[str, Meaning] = {}
    for class_name, body in (section.get("classes") or {}).items():
        meaning = body.get("meaning")
        if meaning not in ("bearing", "preserving", "content"):
            raise LexiconError(
                f"{name}.classes.{class_name}: meaning is bearing, preserving or content"
            )
        meanings[class_name] = meaning
        for word in body.get("words") or ():
            word_class.setdefault(str(word).lower(), class_name)
    groups: dict[str, int] = {}
    for number, group in enumerate(section.get("synonyms") or ()):
        for word in group:
            groups[str(word).lower()] = number
    multi = {
        word
        for word in [*word_class, *groups, *templates.values()]
        if len(word) > 1 and not word.isascii()
    }
    examples = tuple(
        (str(query), str(candidate), str(verdict))
        for query, candidate, verdict in (section.get("examples") or ())
    )
    return LanguageLexicon(
        contractions={
            str(k).lower(): str(v) for k, v in (section.get("contractions") or {}).items()
        },
        equivalents={str(k).lower(): str(v) for k, v in (section.get("equivalents") or {}).items()},
        templates=templates,
        word_class=word_class,
        class_meaning=meanings,
        synonym_group=groups,
        multi_char_words=tuple(sorted(multi, key=len, reverse=True)),
        examples=examples,
    )
