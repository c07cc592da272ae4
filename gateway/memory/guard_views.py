"""The forms of a memory's text that the write guard matches its rules against.

Attackers dress a forbidden phrase so that a plain regex misses it while a model still
reads it: look-alike letters from other scripts ("Іgnore" with a Cyrillic "І"),
invisible characters inside words, letters spaced or dotted out ("i g n o r e",
"p.a.s.s.w.o.r.d"), or the whole instruction wrapped in an encoding the model can
undo (base64, hex, %-escapes, HTML entities, `\\u` escapes, invisible Unicode tag
characters). `matching_views` undoes each of these and returns every distinct form; the
guard refuses the content if any form matches. The forms are only matched, never stored
or shown.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from urllib.parse import unquote

# Decoded payloads may themselves be encoded once more ("base64 of hex"); deeper
# nesting is not an "obvious" encoding and is not followed.
_MAX_DECODE_DEPTH = 2
# Bounds on the work per write: memories are at most 8,000 characters.
_MAX_PAYLOADS = 16
_MIN_ENCODED_CHARS = 16

# Format characters (Unicode category Cf: zero-width spaces and joiners, direction
# marks and isolates, word joiner, BOM, tag characters) plus those that render as
# nothing but are not Cf: the combining grapheme joiner, variation selectors, Hangul
# fillers, the Mongolian vowel separator.
_NOT_CF_INVISIBLE = frozenset(
    [
        *(0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFFA0),
        *range(0x180B, 0x1810),
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    ]
)
_TAG_FIRST, _TAG_LAST = 0xE0020, 0xE007E  # tag characters that mirror ASCII 0x20-0x7E

# Letters of other scripts (and a few Latin oddities) that render like Latin letters:
# the Cyrillic and Greek look-alikes of Unicode's confusables list, which covers what
# attackers use to dodge English keywords. NFKC already folds full-width and
# mathematical letters.
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "ё": "e", "һ": "h", "і": "i",
        "ї": "i", "ј": "j", "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p",
        "ԛ": "q", "г": "r", "ѕ": "s", "т": "t", "ц": "u", "у": "y", "ѵ": "v", "ԝ": "w",
        "х": "x", "ү": "y", "ɡ": "g", "ԍ": "g",
        "А": "A", "В": "B", "С": "C", "Ԁ": "D", "Е": "E", "Ё": "E", "Һ": "H", "І": "I",
        "Ї": "I", "Ј": "J", "К": "K", "Ӏ": "I", "М": "M", "Н": "H", "О": "O", "Р": "P",
        "Ԛ": "Q", "Ѕ": "S", "Т": "T", "Ү": "Y", "Ѵ": "V", "Ԝ": "W", "Х": "X", "У": "Y",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
        "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "ϲ": "c", "ϳ": "j",
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
        "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
        # Armenian and Latin look-alikes
        "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "ı": "i", "ȷ": "j", "ꞵ": "b",
        "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ɢ": "g", "ʜ": "h", "ɪ": "i",
        "ᴊ": "j", "ᴋ": "k", "ʟ": "l", "ᴍ": "m", "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ʀ": "r",
        "ꜱ": "s", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z",
    }
)  # fmt: skip

# Runs of three or more single characters with one space between them ("i g n o r e",
# "h u n t e r 2", "4 1 1 1 ...") and of four or more letters with one dot, dash,
# underscore or star between them ("p.a.s.s.w.o.r.d"). Two spaces separate the words
# of such text ("i g n o r e  a l l"), so they end a run.
_SPACED_RUN = re.compile(r"(?<!\S)(?:\S[ \t\u00a0\u3000]){2,}\S(?!\S)")
_SPACED_GAP = re.compile(r"(?<=\S)[ \t\u00a0\u3000](?=\S)")
_DOTTED_RUN = re.compile(r"(?<![^\W_])(?:[^\W\d_][.\-_*·•]){3,}[^\W\d_](?![^\W_])")
_DOTTED_GAP = re.compile(r"[.\-_*·•]")

_BASE64 = re.compile(rf"[A-Za-z0-9+/_-]{{{_MIN_ENCODED_CHARS},}}={{0,2}}")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]?){8,}(?![0-9A-Fa-f])")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_ENTITY = re.compile(r"&#?[0-9A-Za-z]{2,8};")
_ESCAPE = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|U[0-9A-Fa-f]{8})")
_ESCAPE_ONE = re.compile(r"\\(u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|U[0-9A-Fa-f]{8})")


def strip_invisible(text: str) -> str:
    return "".join(
        char
        for char in text
        if unicodedata.category(char) != "Cf" and ord(char) not in _NOT_CF_INVISIBLE
    )


def fold_lookalikes(text: str) -> str:
    """Confusable letters to Latin, accents and other combining marks dropped."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_CONFUSABLES))
    bare = "".join(char for char in decomposed if unicodedata.category(char) != "Mn")
    return unicodedata.normalize("NFKC", bare).translate(_CONFUSABLES)


def join_spaced_letters(text: str) -> str:
    text = _SPACED_RUN.sub(lambda match: _SPACED_GAP.sub("", match.group()), text)
    return _DOTTED_RUN.sub(lambda match: _DOTTED_GAP.sub("", match.group()), text)


def _printable(decoded: bytes) -> str | None:
    """The decoded bytes as text, if they are text (not a random key's bytes)."""
    try:
        text = decoded.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 4:
        return None
    readable = sum(1 for char in text if char.isprintable() or char in "\n\t")
    letters = sum(1 for char in text if char.isalpha())
    if readable < 0.95 * len(text) or letters < 0.5 * len(text.replace(" ", "")):
        return None
    return text


def _from_base64(token: str) -> str | None:
    body = token.rstrip("=")
    if len(body) < _MIN_ENCODED_CHARS or body.isalpha() or body.isdigit():
        return None  # a plain long word or number, not an encoding
    padded = body + "=" * (-len(body) % 4)
    try:
        decoded = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _printable(decoded)


def _from_hex(token: str) -> str | None:
    digits = re.sub(r"[ :]", "", token)
    if len(digits) % 2:
        return None
    try:
        return _printable(bytes.fromhex(digits))
    except ValueError:
        return None


def _from_tags(text: str) -> str | None:
    hidden = "".join(
        chr(ord(char) - 0xE0000) for char in text if _TAG_FIRST <= ord(char) <= _TAG_LAST
    )
    return hidden if len(hidden) >= 4 else None


def _from_escapes(text: str) -> str:
    def undo(match: re.Match[str]) -> str:
        code = int(match.group(1)[1:], 16)
        return chr(code) if code <= 0x10FFFF else match.group()

    return _ESCAPE_ONE.sub(undo, text)


def decoded_payloads(text: str) -> list[str]:
    """Texts hidden in `text` by an obvious encoding, decoded once each."""
    payloads: list[str] = []
    hidden = _from_tags(text)
    if hidden:
        payloads.append(hidden)
    if len(_PERCENT.findall(text)) >= 3:
        payloads.append(unquote(text))
    if len(_ENTITY.findall(text)) >= 3:
        payloads.append(html.unescape(text))
    if len(_ESCAPE.findall(text)) >= 3:
        payloads.append(_from_escapes(text))
    for match in _HEX.finditer(text):
        decoded = _from_hex(match.group())
        if decoded:
            payloads.append(decoded)
    for match in _BASE64.finditer(text):
        decoded = _from_base64(match.group())
        if decoded:
            payloads.append(decoded)
    return payloads[:_MAX_PAYLOADS]


def matching_views(text: str, depth: int = 0) -> list[str]:
    """Every distinct form of `text` to match, the NFKC text itself first."""
    base = strip_invisible(unicodedata.normalize("NFKC", text))
    folded = fold_lookalikes(base)
    views = [base, folded, join_spaced_letters(folded)]
    if depth < _MAX_DECODE_DEPTH:
        for payload in decoded_payloads(unicodedata.normalize("NFKC", text)):
            views.extend(matching_views(payload, depth + 1))
    return list(dict.fromkeys(views))
