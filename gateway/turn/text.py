"""The last user turn's text, in the two views the gateway reads it in.

- `rule_turn`: what the classifier judges: text parts (`text`, `input_text`) and bare
  string parts joined by line breaks, as sent, and whether dialogue turns precede it.
- `key_text`: what memory retrieval and capture search by and what a decision record
  keeps as the prompt: every part with a string `text`, joined by line breaks, NFC and
  stripped.

The semantic cache reads the turn split into ask and material (`parse_last_user_turn`).
All three find the last user message with `last_user_index`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Roles whose turns make the last user turn a continuation of a dialogue. System and
# developer prompts are instructions, not dialogue: they do not define "it".
_DIALOGUE_ROLES = frozenset({"user", "assistant", "tool", "function"})


@dataclass(frozen=True, slots=True)
class LastTurn:
    text: str
    has_earlier_turns: bool


def last_user_index(messages: Sequence[Any]) -> int | None:
    """The index of the last message with role `user` (None: there is none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, Mapping) and message.get("role") == "user":
            return index
    return None


def content_text(content: Any) -> str:
    """Text of a message `content`: a string, or a list of parts (only text parts count)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes | bytearray):
        texts: list[str] = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") in ("text", "input_text"):
                text = part.get("text")
                if isinstance(text, str):
                    texts.append(text)
            elif isinstance(part, str):
                texts.append(part)
        return "\n".join(texts)
    return ""


def rule_turn(messages: Sequence[Any]) -> LastTurn | None:
    """The classifier's view: the last user message's text and whether dialogue turns
    precede it; None without a user message."""
    index = last_user_index(messages)
    if index is None:
        return None
    earlier = any(
        isinstance(m, Mapping) and m.get("role") in _DIALOGUE_ROLES for m in messages[:index]
    )
    return LastTurn(content_text(messages[index].get("content")), earlier)


def _parts_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def key_text(messages: Sequence[Any]) -> str:
    """The memory and record view: the last user message's text, NFC, stripped ("" when
    there is none)."""
    index = last_user_index(messages)
    if index is None:
        return ""
    return unicodedata.normalize("NFC", _parts_text(messages[index].get("content"))).strip()
