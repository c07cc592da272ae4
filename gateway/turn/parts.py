"""The parts of a user message: its text, and digests of everything that is not text.

An image, an audio clip or a file changes what the right answer is as much as the words
do ("read the name on this passport"), so every non-text part enters what two requests
must share before one's answer may serve the other. A part is digested whole (its
canonical JSON: URL or bytes, detail, format, file name), so a part type the gateway
does not know is compared as opaque bytes, never dropped.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True, slots=True)
class MessageParts:
    texts: tuple[str, ...]  # each text part (or the string content), NFC, in order
    attachment_digests: tuple[str, ...]  # sha256 of each non-text part, in order


def _text_of(part: Mapping[str, Any]) -> str | None:
    if part.get("type", "text") == "text" and isinstance(part.get("text"), str):
        return unicodedata.normalize("NFC", part["text"])
    return None


def part_digest(part: Any) -> str:
    """A stable digest of one part: key order and `1.0` vs `1` do not matter."""
    try:
        encoded = orjson.dumps(part, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # not JSON (cannot come from a parsed body): its repr, still opaque
        encoded = repr(part).encode("utf-8", "surrogatepass")
    return hashlib.sha256(encoded).hexdigest()


def split_parts(content: Any) -> MessageParts:
    """The text and the attachment digests of a message's `content`."""
    if content is None:
        return MessageParts((), ())
    if isinstance(content, str):
        return MessageParts((unicodedata.normalize("NFC", content),), ())
    if not isinstance(content, list):
        return MessageParts((), (part_digest(content),))
    texts: list[str] = []
    digests: list[str] = []
    for part in content:
        text = _text_of(part) if isinstance(part, Mapping) else None
        if text is None:
            digests.append(part_digest(part))
        else:
            texts.append(text)
    return MessageParts(tuple(texts), tuple(digests))
