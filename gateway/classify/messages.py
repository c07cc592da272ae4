"""The classifier's text normalisation. The text it judges comes from the one turn
module (`gateway.turn.rule_turn`, re-exported here as `last_user_turn`)."""

from __future__ import annotations

import unicodedata

from gateway.turn.text import LastTurn, content_text
from gateway.turn.text import rule_turn as last_user_turn

__all__ = ["LastTurn", "content_text", "last_user_turn", "normalize"]


def normalize(text: str) -> str:
    """NFKC (full-width punctuation and digits become ASCII), straight quotes, single
    spaces; line breaks are kept because they end sentences.

    Case is kept: identifiers such as IBANs are recognised by their upper-case letters.
    """
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
