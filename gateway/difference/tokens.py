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
# A verbatim span is held out of the rewrites as one private-use character (the frames
# read around it: "what does the word "cactus" mean").
_HELD_BASE = 0xE000
_MAX_HELD = 0x800
_HELD_OR_PRIVATE = re.compile(_VERBATIM.pattern + r"|[\ue000-\ue7ff]")
_TOKEN = re.compile(
    r"(?P<held>[\ue000-\ue7ff])"
    r"|(?P<tab>\t+)"  # tabs are content: a pasted TSV row's empty column
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
    held: list[str] = []

    def hold(match: re.Match[str]) -> str:
        if len(held) >= _MAX_HELD:
            return " "  # beyond 2,048 spans: the ask is far past what is analysed
        held.append(match.group(0))
        return f" {chr(_HELD_BASE + len(held) - 1)} "

    # The text's own private-use characters are held too (as themselves): none of them
    # can be read as another span's marker.
    text = _HELD_OR_PRIVATE.sub(hold, text)
    if not text.strip():
        return ()
    # Private-use characters have no case: lowering the text keeps the markers.
    text = lexicon.rewrite(_DASH.sub(" , ", text.lower().replace("’", "'")))
    tokens: list[Token] = []
    position = 0
    for run in _CJK_RUN.finditer(text):
        tokens.extend(_non_cjk(text[position : run.start()], held))
        tokens.extend(_cut(run.group(0), lexicon.zh.words_by_first_char))
        position = run.end()
    tokens.extend(_non_cjk(text[position:], held))
    return tuple(tokens)


def _non_cjk(text: str, held: list[str]) -> list[Token]:
    tokens: list[Token] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        value = match.group(0)
        if kind == "held":
            index = ord(value) - _HELD_BASE
            tokens.append(Token(held[index] if index < len(held) else value, "verbatim"))
        elif kind == "word":
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
