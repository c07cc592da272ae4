"""An ask as the tokens the difference analysis aligns.

Lossless where it matters: quoted strings ('a    b', "Hello", 「…」) and code spans
(`x  = 1`) are single tokens compared byte for byte, case and spaces included; numbers,
operators and signs are tokens of their own (`x++` is `x`, `++`; `7 // 2` is `7`, `//`,
`2`). Everything else is compared without case, with contractions expanded, known
equivalent phrases rewritten and question templates ("how do I", "what is the way to",
怎么, 如何) replaced by one canonical token: rewrites only map a phrase onto the phrase
it always means, so two texts that differ anywhere else still differ.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from gateway.difference.lexicon import Lexicon

TokenKind = Literal["word", "cjk", "number", "operator", "punct", "verbatim", "canon"]


@dataclass(frozen=True, slots=True)
class Token:
    key: str  # what is compared
    kind: TokenKind


# Quoted and code spans, kept verbatim. A single-quoted span needs a quote at a word's
# edge on both sides, so apostrophes ("don't", "the users' data") are not quotes.
_VERBATIM = re.compile(
    r"`[^`\n]{1,400}`"
    r'|"[^"\n]{1,400}"|“[^”\n]{1,400}”|「[^」\n]{1,400}」|『[^』\n]{1,400}』|《[^》\n]{1,200}》'
    r"|(?<![\w'])'[^'\n]{1,400}'(?![\w'])"
)
_TOKEN = re.compile(
    r"(?P<tab>\t+)"  # tabs are content: a pasted TSV row's empty column
    r"|(?P<canon><[a-z_]+>)"
    r"|(?P<number>\d+(?:[.,:]\d+)*%?)"
    r"|(?P<word>[a-z]+(?:-[a-z]+)*(?:'(?!s\b)[a-z]+)?|'s\b)"
    r"|(?P<operator>[+\-*/%=<>!&|^~@#$\\()\[\]{}]+)"
    r"|(?P<punct>[.,;:!?…'\"，。？！、；：（）“”‘’·~～]+)"
    r"|(?P<cjk>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])"
    r"|(?P<other>\S)",
    re.IGNORECASE,
)
# A dash between spaces and between words is punctuation ("affect vs effect - what's
# the difference?"); between numbers or one-letter names it is a minus ("3 - 2").
_DASH = re.compile(r"(?<=[a-z]{2}) +[-–—]+ +(?=[a-z]{2})|[–—]")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def tokenize(text: str, lexicon: Lexicon) -> tuple[Token, ...]:
    tokens: list[Token] = []
    position = 0
    for match in _VERBATIM.finditer(text):
        tokens.extend(_plain_tokens(text[position : match.start()], lexicon))
        tokens.append(Token(match.group(0), "verbatim"))
        position = match.end()
    tokens.extend(_plain_tokens(text[position:], lexicon))
    return tuple(tokens)


def _plain_tokens(text: str, lexicon: Lexicon) -> list[Token]:
    if not text.strip():
        return []
    text = _DASH.sub(" , ", text.lower().replace("’", "'"))
    for pattern, table in lexicon.rewrites():
        text = pattern.sub(functools.partial(_replacement, table), text)
    tokens: list[Token] = []
    position = 0
    for run in _CJK_RUN.finditer(text):
        tokens.extend(_non_cjk(text[position : run.start()]))
        tokens.extend(_cut(run.group(0), lexicon.zh.words_by_first_char))
        position = run.end()
    tokens.extend(_non_cjk(text[position:]))
    return tokens


def _replacement(table: Mapping[str, str], match: re.Match[str]) -> str:
    # Spaces around: a rewritten phrase is a word of its own ("怎么" -> " <how> ").
    return f" {table[' '.join(match.group(0).split())]} "


def _non_cjk(text: str) -> list[Token]:
    tokens: list[Token] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        value = match.group(0)
        if kind == "word":
            tokens.append(Token(value.replace("-", ""), "word"))
        elif kind == "tab":
            tokens.append(Token(value, "verbatim"))
        elif kind in ("canon", "number", "operator", "punct"):
            tokens.append(Token(value, kind))  # type: ignore[arg-type]
        else:
            tokens.append(Token(value, "operator"))
    return tokens


def _cut(run: str, words: Mapping[str, tuple[str, ...]]) -> list[Token]:
    """A CJK run cut by longest match against the lexicon's words, else by character."""
    tokens: list[Token] = []
    index = 0
    while index < len(run):
        for word in words.get(run[index], ()):
            if run.startswith(word, index):
                tokens.append(Token(word, "cjk"))
                index += len(word)
                break
        else:
            tokens.append(Token(run[index], "cjk"))
            index += 1
    return tokens
