"""One parsed view of the last user turn: the ask, the material, the attachments.

The semantic cache compares asks by meaning and everything else exactly: two requests
may share an answer only when their material (documents, context, code, tables) and
their attachments (images, audio, files) are the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gateway.turn.parts import split_parts
from gateway.turn.split import TurnSplit, ask_length, split_turn
from gateway.turn.text import LastTurn, key_text, last_user_index, rule_turn

__all__ = [
    "LastTurn",
    "ParsedTurn",
    "TurnSplit",
    "ask_length",
    "key_text",
    "last_user_index",
    "parse_last_user_turn",
    "rule_turn",
    "split_turn",
]


@dataclass(frozen=True, slots=True)
class ParsedTurn:
    index: int | None  # of the last user message; None: there is none
    ask: str
    material: tuple[str, ...]
    attachment_digests: tuple[str, ...]
    rule: str
    text_chars: int  # of the turn's whole text


def last_user_turn_chars(messages: Sequence[Mapping[str, Any]]) -> int:
    """About how many characters the last user turn's text has (its string content, or
    its parts' strings): what splitting it will cost, known without splitting it."""
    index = last_user_index(messages)
    content = None if index is None else messages[index].get("content")
    if isinstance(content, str):
        return len(content)
    if not isinstance(content, list):
        return 0
    return sum(
        len(value)
        for part in content
        if isinstance(part, Mapping)
        for value in part.values()
        if isinstance(value, str)
    )


def parse_last_user_turn(messages: Sequence[Mapping[str, Any]], max_ask_chars: int) -> ParsedTurn:
    index = last_user_index(messages)
    if index is None:
        return ParsedTurn(None, "", (), (), "plain", 0)
    parts = split_parts(messages[index].get("content"))
    # Each text part is a paragraph of its own: a document part and a question part
    # split like a pasted document followed by its question.
    text = "\n\n".join(t.strip() for t in parts.texts if t.strip())
    split = split_turn(text, max_ask_chars)
    return ParsedTurn(
        index=index,
        ask=split.ask,
        material=split.material,
        attachment_digests=parts.attachment_digests,
        rule=split.rule,
        text_chars=len(text),
    )
