"""Text plumbing shared by the English and Chinese slot extractors.

Extraction runs slot by slot over one working copy of the text. Each slot blanks the
spans it consumed so that later slots do not read them again: the digits of
`2024-07-04` are a date, not three numbers; `New York` is a place, not the polarity
word `new`. Blanking keeps every offset aligned with the original text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

# Curly quotes and dashes that users type or paste; NFKC leaves them alone.
_PUNCTUATION = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
)
_SPACES = re.compile(r"\s+")


def normalize(text: str) -> str:
    """NFKC (full-width digits, letters and punctuation become ASCII; `℃` becomes `°C`),
    straight quotes and dashes, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_PUNCTUATION)
    return _SPACES.sub(" ", text).strip()


def lower_aligned(text: str) -> str:
    """Lower case without changing the length (`İ` would grow to two characters)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def cap(value: str, limit: int = 40) -> str:
    """Mismatch values may be logged: keep them short."""
    return value if len(value) <= limit else value[: limit - 1] + "…"


def joined(values: Iterable[str]) -> str:
    return cap(",".join(sorted(values)))


class Masked:
    """A working copy of a text from which slots take what they recognise.

    `cased` keeps the original capitalisation (same offsets) for case-sensitive rules
    such as `US` versus the pronoun `us`, or `Max` the tier versus `max` the function.
    """

    __slots__ = ("cased", "low", "text")

    def __init__(self, cased: str) -> None:
        self.cased = cased
        self.low = lower_aligned(cased)  # the whole text, lower case, never blanked
        self.text = self.low  # what is left to read

    def take(self, pattern: re.Pattern[str]) -> list[re.Match[str]]:
        """All matches of `pattern` in what is left; their spans are blanked."""
        matches = list(pattern.finditer(self.text))
        if matches:
            self.blank((m.start(), m.end()) for m in matches)
        return matches

    def blank(self, spans: Iterable[tuple[int, int]]) -> None:
        pieces: list[str] = []
        position = 0
        for start, end in sorted(spans):
            if start < position:  # overlapping spans: blank the union
                start = position
            pieces.append(self.text[position:start])
            pieces.append(" " * max(0, end - start))
            position = max(position, end)
        pieces.append(self.text[position:])
        self.text = "".join(pieces)


def alternation(words: Iterable[str]) -> str:
    """A regex alternation that prefers the longest form (`turn off` before `turn`)."""
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))


def word_pattern(words: Iterable[str], flags: int = 0) -> re.Pattern[str]:
    """Whole words or phrases, any of `words` (lower case), a space in a phrase matching
    any run of spaces or hyphens ("wi fi", "wi-fi")."""
    escaped = alternation(words).replace(r"\ ", r"[\s-]+").replace(r"\-", r"[\s-]+")
    return re.compile(rf"(?<![\w])(?:{escaped})(?![\w])", flags)


def phrase_key(text: str) -> str:
    """The lookup key of a phrase matched by `word_pattern`: lower case, one space for
    each run of spaces or hyphens."""
    return " ".join(text.lower().replace("-", " ").split())


def keyed(table: Mapping[str, str]) -> dict[str, str]:
    """`table` with its keys as `phrase_key` writes them."""
    return {phrase_key(key): value for key, value in table.items()}


def words(text: str) -> tuple[str, ...]:
    """A word list written as one string (data files stay compact and greppable)."""
    return tuple(text.split())


def phrases(text: str) -> tuple[str, ...]:
    """A phrase list written as one string, phrases separated by commas (line breaks
    inside a phrase are spaces)."""
    return tuple(" ".join(p.split()) for p in text.split(",") if p.strip())
