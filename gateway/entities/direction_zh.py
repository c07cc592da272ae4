"""Chinese directions: 从X到Y, X到Y, 把X转换成Y, X兑Y, X飞Y, X比Y.

Endpoints are preferably known terms (names, currencies, units, Latin words) near the
marker; otherwise a few characters cut at the next verb or particle (从公司到机场打车
gives 公司 > 机场). Such guessed endpoints are harmless: only a reversal of the same
two endpoints counts as a mismatch, and paraphrases do not reverse.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from gateway.entities.lexicon_zh import ChineseLexicon
from gateway.entities.text import alternation

_WINDOW = 12  # characters searched on each side of a marker
_ANCHORS = "从把将由"
# Texts are NFKC-normalised, so full-width punctuation is ASCII here; 。 and 、 remain.
_PUNCTUATION = frozenset(",.?!;: \u3002\u3001")


class Term(NamedTuple):
    start: int
    end: int
    key: str


class ChineseDirections:
    def __init__(self) -> None:
        lex = ChineseLexicon.packaged()
        # Non-markers in the same alternation, longest first: 收到 wins over 到.
        self._markers = re.compile(alternation((*lex.DIRECTION_MARKERS, *lex.NOT_DIRECTION)))
        self._not_markers = frozenset(lex.NOT_DIRECTION)
        self._stops = frozenset(lex.ENDPOINT_STOPS)

    def find(self, text: str, terms: list[Term]) -> set[tuple[str, str]]:
        pairs: set[tuple[str, str]] = set()
        terms = sorted(terms)
        for match in self._markers.finditer(text):
            if match.group(0) in self._not_markers or _inside(terms, match.start()):
                continue
            left = self._left(text, terms, match.start())
            right = self._right(text, terms, match.end())
            if left and right and left != right:
                pairs.add((left, right))
        return pairs

    def _left(self, text: str, terms: list[Term], marker: int) -> str:
        start = marker
        while start > 0 and marker - start < _WINDOW and text[start - 1] not in _PUNCTUATION:
            start -= 1
        anchor = max(
            (i for i in range(start, marker) if text[i] in _ANCHORS and not _inside(terms, i)),
            default=None,
        )
        begin = start if anchor is None else anchor + 1
        near = [t for t in terms if t.start >= begin and t.end <= marker]
        if near:
            return near[0].key if anchor is not None else near[-1].key
        if anchor is not None:
            return self._cut(text[begin:marker])
        chunk = ""  # no anchor: the characters right before the marker
        index = marker - 1
        while index >= start and text[index] not in self._stops and len(chunk) < 4:
            chunk = text[index] + chunk
            index -= 1
        return chunk if _is_han(chunk) else ""

    def _right(self, text: str, terms: list[Term], marker: int) -> str:
        stop = marker
        while stop < len(text) and stop - marker < _WINDOW and text[stop] not in _PUNCTUATION:
            stop += 1
        near = [t for t in terms if t.start >= marker and t.end <= stop]
        if near and near[0].start - marker <= 4:
            return near[0].key
        return self._cut(text[marker:stop])

    def _cut(self, chunk: str) -> str:
        for index, char in enumerate(chunk):
            if char in self._stops:
                chunk = chunk[:index]
                break
        chunk = chunk[:4]
        return chunk if _is_han(chunk) else ""


def _inside(terms: list[Term], position: int) -> bool:
    return any(t.start <= position < t.end for t in terms)


def _is_han(chunk: str) -> bool:
    return bool(chunk) and all("\u4e00" <= c <= "\u9fff" for c in chunk)
