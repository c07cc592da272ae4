"""Rule-based capture of what a user states about themselves or decides, so that later
turns and sessions can be given it back. Offline and conservative: only first-person
statements and explicit decisions, never questions."""

from __future__ import annotations

import re

_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")
_QUESTION = re.compile(
    r"[?？]\s*$|^\s*(what|who|where|when|why|how|which|do|does|is|are|can)\b", re.I
)
_STATEMENT_EN = re.compile(
    r"\b(?:i am|i'm|my [a-z' ]{1,30}? (?:is|are|was)|i (?:prefer|like|love|hate|dislike|"
    r"need|use|work|live|moved|own|have)|i(?:'ve| have)? (?:decided|chosen|chose)|"
    r"we (?:decided|chose|agreed|will use)|let's go with|i(?:'ll| will) go with|"
    r"remember that|please remember)\b",
    re.I,
)
_STATEMENT_ZH = re.compile(
    r"我(?:是|叫|姓|住在|在.{1,12}工作|喜欢|不喜欢|讨厌|偏好|需要|决定|选择|选了|有)|我的.{1,12}是|"
    r"我们(?:决定|选择|约定)|选[A-Da-d一二三四]|就用|记住"
)
_MIN_CHARS = 4
_MAX_CHARS = 300


def extract_statements(text: str) -> list[str]:
    """The sentences of `text` worth remembering, in order, without duplicates."""
    found: list[str] = []
    for match in _SENTENCE.finditer(text):
        sentence = " ".join(match.group(0).split())
        if not (_MIN_CHARS <= len(sentence) <= _MAX_CHARS) or _QUESTION.search(sentence):
            continue
        if (_STATEMENT_EN.search(sentence) or _STATEMENT_ZH.search(sentence)) and (
            sentence not in found
        ):
            found.append(sentence)
    return found
