"""Pull the text the classifier judges out of an OpenAI `messages` list."""

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


def last_user_turn(messages: Sequence[Mapping[str, Any]]) -> LastTurn | None:
    """The last user message and whether dialogue turns precede it; None without one."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        earlier = any(
            isinstance(m, Mapping) and m.get("role") in _DIALOGUE_ROLES for m in messages[:index]
        )
        return LastTurn(content_text(message.get("content")), earlier)
    return None


def normalize(text: str) -> str:
    """NFKC (full-width punctuation and digits become ASCII), straight quotes, single
    spaces; line breaks are kept because they end sentences.

    Case is kept: identifiers such as IBANs are recognised by their upper-case letters.
    """
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
