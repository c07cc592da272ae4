"""Finding a chat body with too many messages or content parts without parsing it.

Parsing a 3 MB body of 60,000 messages with orjson holds the interpreter lock for tens
of milliseconds in one C call, in whatever thread it runs: the event loop waits that
long. Its count can be found instead by walking the JSON's tokens (strings, brackets,
punctuation) up to the first array element over the limit. That walk is Python code, so
it gives the lock up to the event loop every few hundred microseconds, and it stops
after `max_messages` elements, however long the body is.

It only ever proves a body over a limit. When it cannot (not JSON, not this shape, a key
spelled with escapes), the full parse and validation decide as usual, so the answer for
any body is what that path would give, or this 400 for a body over a limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A JSON string (with its escapes), one structural character, or a run of anything else
# (numbers, true, false, null: what matters is only that a value is there).
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]|[^\s"\[\]{}:,]+')
_MESSAGES_KEY = b'"messages"'
_CONTENT_KEY = b'"content"'
# Literal `"role"` tokens: each message has one (unless its key is spelled with escapes).
_ROLE_TOKEN = b'"role"'
_TYPE_TOKEN = b'"type"'
_COUNT_SLICE_BYTES = 256 * 1024  # one C call of bytes.count: well under a millisecond

_TOP, _MESSAGES, _MESSAGE, _CONTENT, _OTHER = range(5)


@dataclass(slots=True)
class _Frame:
    role: int
    is_object: bool
    key: bytes | None = None  # objects: the key whose value comes next
    commas: int = 0  # arrays: elements - 1 once one is seen
    has_value: bool = False  # arrays: any element at all


def count_literal(raw: bytes, token: bytes) -> int:
    """How often `token` occurs in `raw`, counted in slices (each a short C call, so
    the interpreter lock changes hands between them in a worker thread)."""
    total = 0
    for start in range(0, len(raw), _COUNT_SLICE_BYTES):
        # Occurrences that start in [start, start + slice): the end reaches past it by
        # the token's length less one.
        total += raw.count(token, start, start + _COUNT_SLICE_BYTES + len(token) - 1)
    return total


def may_exceed(raw: bytes, max_messages: int, max_content_parts: int) -> bool:
    """Cheap first look: whether the body could hold more messages or parts than the
    limits (every message names its `role` and every part its `type`)."""
    return (
        count_literal(raw, _ROLE_TOKEN) > max_messages
        or count_literal(raw, _TYPE_TOKEN) > max_content_parts
    )


def exceeded_limit(raw: bytes, max_messages: int, max_content_parts: int) -> str | None:
    """`"messages"` or `"content_parts"` when the top-level `messages` array is proven
    longer than `max_messages`, or its messages' `content` arrays hold more than
    `max_content_parts` parts in all; None otherwise (including for bodies this walk
    cannot follow)."""
    stack: list[_Frame] = []
    last_string: bytes | None = None
    parts = 0
    for match in _TOKEN.finditer(raw):
        token = match.group()
        first = token[0]
        frame = stack[-1] if stack else None
        if first in b"{[":
            is_object = first == ord("{")
            if frame is not None and not frame.is_object and not frame.has_value:
                frame.has_value = True
                if frame.role == _CONTENT:
                    parts += 1
            stack.append(_Frame(_child_role(frame, is_object), is_object))
        elif first in b"}]":
            if not stack:
                return None
            stack.pop()
        elif first == ord(":"):
            if frame is None or not frame.is_object:
                return None
            frame.key = last_string
        elif first == ord(","):
            if frame is None:
                return None
            if frame.is_object:
                frame.key = None
                continue
            frame.commas += 1
            if frame.role == _MESSAGES and frame.commas >= max_messages:
                return "messages"  # commas + 1 elements
            if frame.role == _CONTENT:
                parts += 1
                if parts > max_content_parts:
                    return "content_parts"
        else:
            last_string = token if first == ord('"') else None
            if frame is not None and not frame.is_object and not frame.has_value:
                frame.has_value = True
                if frame.role == _CONTENT:
                    parts += 1
        if parts > max_content_parts:
            return "content_parts"
    return None


def _child_role(parent: _Frame | None, is_object: bool) -> int:
    if parent is None:
        return _TOP if is_object else _OTHER
    if parent.role == _TOP and parent.key == _MESSAGES_KEY and not is_object:
        return _MESSAGES
    if parent.role == _MESSAGES and is_object:
        return _MESSAGE
    if parent.role == _MESSAGE and parent.key == _CONTENT_KEY and not is_object:
        return _CONTENT
    return _OTHER
