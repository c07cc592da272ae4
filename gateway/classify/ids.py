"""Identifiers in a user turn: order/ticket numbers, emails, phones, UUIDs, URLs, paths.

An answer about `order #A12345` is about that one record; serving it to the next person
who asks about `order #B67890` (a near-identical embedding) would leak or mislead, so any
identifier makes the request non-cacheable. Patterns run on NFKC-normalised text, so
full-width digits and punctuation look like their ASCII forms.

Most identifiers contain digits, so a turn without any skips those patterns; record
numbers are found from their digit tokens, looking back for the word that names them
("order", "ticket", "订单号"), which keeps the cost linear in the length of the turn.
The patterns and record words are data (`gateway/rules/data/shared/ids.yaml`).
"""

from __future__ import annotations

import re

from gateway.rules.compile import RuleBook


class IdDetector:
    """Finds identifiers; `detect` returns a rule name, never the matched text."""

    def __init__(self, rule_book: RuleBook | None = None) -> None:
        """Patterns and word lists from the rule files (`gateway/rules/data/`)."""
        book = rule_book if rule_book is not None else RuleBook.packaged()
        rules = book.file("shared/ids")
        # Record words that announce an identifier, and markers between the word and its
        # number ("order no. 982").
        self._record_words = frozenset(rules.words("record_words"))
        self._markers = frozenset(rules.words("markers"))
        self._any_digit = rules.pattern("ids.any_digit")
        # Patterns that need no digit.
        self._textual: tuple[tuple[str, re.Pattern[str]], ...] = (
            ("ids.email", rules.pattern("ids.email")),
            ("ids.url", rules.pattern("ids.url")),
            ("ids.path", rules.pattern("ids.path")),
        )
        # Patterns that need a digit; each starts with a cheap lookahead so that the
        # regex engine skips ordinary words quickly.
        self._numeric: tuple[tuple[str, re.Pattern[str]], ...] = (
            ("ids.uuid", rules.pattern("ids.uuid")),
            ("ids.ip", rules.pattern("ids.ip")),
            ("ids.phone", rules.pattern("ids.phone")),
            ("ids.iban", rules.pattern("ids.iban")),
            ("ids.card", rules.pattern("ids.card")),
            ("ids.record", rules.pattern("ids.record.zh")),
            ("ids.record", rules.pattern("ids.record.hash")),
        )
        self._digit_token = rules.pattern("ids.digit_token")
        self._lookback_words = rules.pattern("ids.lookback_words")
        self._mixed = rules.pattern("ids.mixed")
        self._digits = rules.pattern("ids.digits")
        self._round = rules.pattern("ids.round")
        self._arithmetic = rules.pattern("ids.arithmetic")
        self._code_token = rules.pattern("ids.code_token")
        self._unit_word = rules.pattern("ids.unit_word")
        self._runs = rules.pattern("ids.runs")
        self._prefixed_number = rules.pattern("ids.prefixed_number")

    def detect(self, text: str) -> str | None:
        """Rule name of the first identifier found in `text` (normalised), else None."""
        for rule, pattern in self._textual:
            if pattern.search(text):
                return rule
        if self._any_digit.search(text) is None:
            return None
        for rule, pattern in self._numeric:
            if pattern.search(text):
                return rule
        if self._record_number(text):
            return "ids.record"
        for match in self._digits.finditer(text):
            before = text[max(0, match.start() - 3) : match.start()]
            after = text[match.end() : match.end() + 3]
            if self._round.search(match.group()):
                continue
            if not (self._arithmetic.search(before) or self._arithmetic.search(after)):
                return "ids.digits"
        for match in self._code_token.finditer(text):
            if self._looks_like_code(match.group()):
                return "ids.code"
        return None

    def _record_number(self, text: str) -> bool:
        """ "order #1234", "ticket no. 982", "order A12345", "ticket 98231"; not "order
        2024" (a bare 4-digit number after a record word reads as a year)."""
        for match in self._digit_token.finditer(text):
            token = match.group().strip("-")
            words = self._lookback_words.findall(text[max(0, match.start() - 24) : match.start()])
            if not words:
                continue
            last = words[-1].lower()
            bare = last in self._record_words or (
                last == "#" and len(words) > 1 and (words[-2].lower() in self._record_words)
            )
            marked = (
                last in self._markers and len(words) > 1 and words[-2].lower() in self._record_words
            )
            if token.isdigit():
                if (len(token) >= 3 and (marked or (bare and last == "#"))) or (
                    len(token) >= 5 and bare
                ):
                    return True
            elif (bare or marked) and self._mixed.fullmatch(token):
                return True
        return False

    def _looks_like_code(self, token: str) -> bool:
        """A letters+digits token that is an identifier, not a word like `sha256`.

        Identifiers alternate letters and digits more than once (`AB12CD34`, `A1B2C3`),
        or a short letter prefix carries a long number (`A12345`). Version-like words keep
        their digits at the end (`python3`, `base64`, `rtx4090`) and stay words.
        """
        letters = sum(ch.isalpha() for ch in token)
        digits = sum(ch.isdigit() for ch in token)
        if letters == 0 or digits == 0 or self._unit_word.fullmatch(token):
            return False
        runs = len(self._runs.findall(token))
        if runs >= 4 or (runs == 3 and digits >= 3):
            return True
        # letter prefix + number: only long numbers or upper-case prefixes ("A12345")
        prefix = self._prefixed_number.fullmatch(token)
        return prefix is not None and (
            len(prefix.group(2)) >= 7 or (len(prefix.group(2)) >= 5 and prefix.group(1).isupper())
        )
