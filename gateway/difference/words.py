"""Word-level helpers of the difference analysis: stems, quoted words, a changed run of
Chinese characters with its neighbours."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.difference.tokens import Token

# Inflectional and derivational endings: "summary" / "summarize", "differ" /
# "difference" / "different", "painter" / "painted" share a stem. A prefix that
# reverses a word (un-, de-, dis-) is never stripped: "opened" / "unopened" differ.
_EN_SUFFIXES = (
    "ations", "ation", "izing", "ising", "izes", "ises", "ized", "ised", "ize", "ise",
    "ments", "ment", "ences", "ence", "ents", "ent", "ances", "ance", "ers", "er", "ors",
    "or", "ings", "ing", "ied", "ies", "ed", "es", "ly", "s", "y", "e",
)  # fmt: skip
_MIN_STEM_CHARS = 4


def stem(word: str) -> str:
    if not word.isascii() or len(word) <= _MIN_STEM_CHARS:
        return word
    for suffix in _EN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM_CHARS:
            return word[: -len(suffix)]
    return word


_QUOTE_MARKS = "\"“”「」『』'"


def unquote(
    side_l: list[Token], side_r: list[Token], preserving: list[str]
) -> tuple[list[Token], list[Token]]:
    """A quoted word on one side and the same word unquoted on the other ("the word
    "cactus"" / "cactus") differ only in the quotation marks: both are dropped."""
    for quoted_side, plain_side in ((side_l, side_r), (side_r, side_l)):
        for token in [t for t in quoted_side if t.kind == "verbatim" and t.key[:1] in _QUOTE_MARKS]:
            inner = token.key[1:-1].strip().lower()
            words = [t for t in plain_side if t.kind in ("word", "cjk", "number")]
            for start in range(len(words)):
                for end in range(start + 1, len(words) + 1):
                    joined = " ".join(t.key for t in words[start:end])
                    if joined == inner or joined.replace(" ", "") == inner.replace(" ", ""):
                        quoted_side.remove(token)
                        for matched in words[start:end]:
                            plain_side.remove(matched)
                        preserving.append("quotes")
                        break
                else:
                    continue
                break
    return side_l, side_r


def with_neighbours(run: str, own: Sequence[Token], start: int, size: int) -> list[str]:
    """`run` with the Chinese character before it and the one after it, where those
    are characters: the smallest unit that names something."""
    found = []
    if len(run) >= 2:
        found.append(run)
    if start > 0 and own[start - 1].kind == "cjk":
        found.append(own[start - 1].key + run)
    end = start + size
    if end < len(own) and own[end].kind == "cjk":
        found.append(run + own[end].key)
    return found
