"""Cuts a document into knowledge items that each fit a token size.

Paragraphs (blank-line separated) are kept whole where they fit; a longer one is cut
into sentences, and a sentence longer than the size into word runs (or, for text with
no spaces, token runs). The pieces are packed in order into chunks of at most
`max_tokens`; each chunk after the first starts with the last pieces of the one before,
up to `overlap_tokens`, so that a statement cut off at a boundary is whole in one of
the two chunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol

_PARAGRAPHS = re.compile(r"\n\s*\n")
# After ., ! or ? and a space, or after a CJK full stop (no space follows those).
_SENTENCES = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])")


class Counter(Protocol):
    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...


def chunk_document(
    text: str, counter: Counter, max_tokens: int, overlap_tokens: int = 0
) -> list[str]:
    """The document's chunks, in order; each at most `max_tokens` tokens."""
    if overlap_tokens >= max_tokens:
        raise ValueError("overlap_tokens must be below max_tokens")
    pieces = [(piece, counter.count(piece)) for piece in _pieces(text, counter, max_tokens)]
    chunks: list[str] = []
    current: list[tuple[str, int]] = []
    for piece, tokens in pieces:
        # +1: the separator between pieces (a space or a line break).
        if current and _tokens(current) + tokens + 1 > max_tokens:
            chunks.append(_joined(current))
            current = _overlap(current, overlap_tokens, max_tokens - tokens - 1)
        current.append((piece, tokens))
    if current:
        chunks.append(_joined(current))
    # Joining may merge tokens differently than counted apart: re-check each chunk.
    return [chunk for raw in chunks for chunk in _fitted(raw, counter, max_tokens)]


def _pieces(text: str, counter: Counter, max_tokens: int) -> Iterator[str]:
    for paragraph in _PARAGRAPHS.split(text):
        paragraph = " ".join(paragraph.split())
        if not paragraph:
            continue
        if counter.count(paragraph) <= max_tokens:
            yield paragraph
            continue
        for sentence in _SENTENCES.split(paragraph):
            sentence = sentence.strip()
            if sentence:
                yield from _short(sentence, counter, max_tokens)


def _short(sentence: str, counter: Counter, max_tokens: int) -> Iterator[str]:
    """The sentence, or runs of its words (or tokens) of at most `max_tokens`."""
    if counter.count(sentence) <= max_tokens:
        yield sentence
        return
    run: list[str] = []
    for word in sentence.split(" "):
        candidate = " ".join([*run, word])
        if counter.count(candidate) <= max_tokens:
            run.append(word)
            continue
        if run:
            yield " ".join(run)
        run = []
        if counter.count(word) <= max_tokens:
            run = [word]
        else:
            yield from _token_runs(word, counter, max_tokens)
    if run:
        yield " ".join(run)


def _token_runs(text: str, counter: Counter, max_tokens: int) -> Iterator[str]:
    rest = text
    while rest:
        head = counter.truncate(rest, max_tokens)
        if not head:  # a single character over the size: cannot happen with BPE
            head = rest[0]
        yield head
        rest = rest[len(head) :]


def _overlap(
    previous: list[tuple[str, int]], overlap_tokens: int, room: int
) -> list[tuple[str, int]]:
    """The last pieces of `previous` within `overlap_tokens` (and within `room`, what the
    next piece leaves of the chunk)."""
    kept: list[tuple[str, int]] = []
    for piece in reversed(previous):
        if _tokens([*kept, piece]) > min(overlap_tokens, room):
            break
        kept.insert(0, piece)
    return kept


def _tokens(pieces: list[tuple[str, int]]) -> int:
    return sum(tokens for _, tokens in pieces) + max(len(pieces) - 1, 0)


def _joined(pieces: list[tuple[str, int]]) -> str:
    return " ".join(piece for piece, _ in pieces)


def _fitted(chunk: str, counter: Counter, max_tokens: int) -> Iterator[str]:
    if counter.count(chunk) <= max_tokens:
        yield chunk
    else:
        yield from _token_runs(chunk, counter, max_tokens)
