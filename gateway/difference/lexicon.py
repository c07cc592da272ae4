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
    # Question frames with slots, (pattern, replacement): "what does {x} mean" and "what
    # is the meaning of {x}" both become "<meaning> {x}"
    frames: tuple[tuple[re.Pattern[str], str], ...]
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

    def rewrite(self, text: str) -> str:
        """`text` (lower case) with every rewrite applied, in order: English
        contractions, the question frames of both languages, then equivalents and
        templates (English on word boundaries, then Chinese)."""
        steps = _rewrites(self)
        text = _apply(steps[0], text)
        for pattern, replacement in (*self.en.frames, *self.zh.frames):
            text = pattern.sub(replacement, text)
        for step in steps[1:]:
            text = _apply(step, text)
        return text

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
        # An empty table matches nothing, but keeps its place in the order.
        found.append((pattern or _NEVER, table))
    return tuple(found)


_NEVER = re.compile(r"(?!)")


def _apply(step: tuple[re.Pattern[str], Mapping[str, str]], text: str) -> str:
    pattern, table = step
    return pattern.sub(lambda match: f" {table[' '.join(match.group(0).split())]} ", text)


_SLOT = re.compile(r"\{([a-z])\}")
# Where a frame may start and end: the ask's edges or a sentence's.
_FRAME_EDGES = {
    "en": (r"(?:^|(?<=[.?!;:]\s))\s*", r"(?=\s*[.?!;]|\s*$)"),
    "zh": (r"(?:^|(?<=[，。？！,.?!；;\s]))", r"(?=\s*[，。？！,.?!；;]|\s*$)"),
}


def _frames(section: Any, name: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    start, end = _FRAME_EDGES[name]
    compiled = []
    for index, frame in enumerate(section.get("frames") or ()):
        target, sources = frame.get("to"), frame.get("from")
        if not isinstance(target, str) or not sources:
            raise LexiconError(f"{name}.frames[{index}]: needs `to` and a list `from`")
        replacement = " " + _SLOT.sub(r"\\g<\1>", target) + " "
        for source in sorted(sources, key=len, reverse=True):
            pieces = []
            position = 0
            for slot in _SLOT.finditer(source):
                pieces.append(re.escape(source[position : slot.start()]).replace(r"\ ", r"\s+"))
                pieces.append(f"(?P<{slot.group(1)}>.+?)")
                position = slot.end()
            pieces.append(re.escape(source[position:]).replace(r"\ ", r"\s+"))
            try:
                compiled.append((re.compile(start + "".join(pieces) + end), replacement))
            except re.error as exc:
                raise LexiconError(f"{name}.frames[{index}]: {source!r}: {exc}") from None
    return tuple(compiled)


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
        frames=_frames(section, name),
        examples=examples,
    )
