"""Identifiers in a user turn: order/ticket numbers, emails, phones, UUIDs, URLs, paths.

An answer about `order #A12345` is about that one record; serving it to the next person
who asks about `order #B67890` (a near-identical embedding) would leak or mislead, so any
identifier makes the request non-cacheable. Patterns run on NFKC-normalised text, so
full-width digits and punctuation look like their ASCII forms.

Most identifiers contain digits, so a turn without any skips those patterns; record
numbers are found from their digit tokens, looking back for the word that names them
("order", "ticket", "订单号"), which keeps the cost linear in the length of the turn.
"""

from __future__ import annotations

import re

# Record words that announce an identifier ("order #A12345", "ticket 98231").
_RECORD_WORDS = frozenset(
    (
        "order", "ticket", "account", "acct", "invoice", "tracking", "booking",
        "reservation", "confirmation", "case", "reference", "ref", "transaction", "txn",
        "customer", "member", "membership", "policy", "claim", "shipment", "parcel",
        "package", "serial", "license", "licence", "sku", "po", "receipt", "incident",
        "request", "application", "passport", "id", "loyalty", "routing", "iban", "swift",
        "card",
    )
)  # fmt: skip
# Markers between the record word and its number: "order no. 982", "ticket # 98231".
_MARKERS = frozenset(("number", "no", "no.", "num", "nr", "#", "id", "code"))
# Chinese record words ("订单号 2023...", "快递单号 SF123...").
_ZH_RECORD_WORDS = (
    "订单号?|单号|运单号?|快递单号|工单号?|账号|帐号|账户|帐户|卡号|会员号|编号|流水号|"
    "身份证号?|护照号?|手机号码?|电话号码?|发票号?|合同号|保单号?|案件号|申请号|预订号|确认号"
)
# Suffixes that make a number+letters token an ordinary word ("10am", "1080p", "5kg").
_UNIT_SUFFIXES = (
    "st|nd|rd|th|am|pm|px|pt|em|kg|km|mm|cm|ml|mg|gb|mb|kb|tb|ms|hz|khz|mhz|ghz|fps|mph|"
    "kph|kw|kwh|mah|v|w|k|m|b|x|p|s|d|h|g|l"
)


class IdDetector:
    """Finds identifiers; `detect` returns a rule name, never the matched text."""

    def __init__(self) -> None:
        flags = re.IGNORECASE
        self._any_digit = re.compile(r"\d")
        # Patterns that need no digit.
        self._textual: tuple[tuple[str, re.Pattern[str]], ...] = (
            ("ids.email", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}", flags)),
            (
                "ids.url",
                re.compile(
                    r"\b(?:https?|ftp)://\S+|\bwww\.[\w-]+\.\S+|"
                    # bare domains only with a path: "example.com/orders/7"
                    r"\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|ai|cn|co|uk|de|fr|jp|gov|"
                    r"edu)/\S+",
                    flags,
                ),
            ),
            (
                "ids.path",
                re.compile(
                    # unix absolute or home paths with at least two segments
                    r"(?:^|(?<=[\s\"'`(=:]))~?/[\w.@-]+(?:/[\w.@-]*)+|"
                    # relative paths that say so: ./foo.py, ../lib/x
                    r"(?:^|(?<=[\s\"'`(=:]))\.{1,2}/[\w.@/-]+|"
                    # windows drive paths and UNC shares
                    r"\b[a-z]:\\[^\s\"'<>|]+|\\\\[\w.-]+\\[^\s\"'<>|]+",
                    flags,
                ),
            ),
        )
        # Patterns that need a digit; each starts with a cheap lookahead so that the
        # regex engine skips ordinary words quickly.
        self._numeric: tuple[tuple[str, re.Pattern[str]], ...] = (
            (
                "ids.uuid",
                re.compile(
                    r"\b(?=[0-9a-f]{8}-)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                    r"[0-9a-f]{12}\b",
                    flags,
                ),
            ),
            (
                "ids.ip",
                re.compile(
                    r"(?<![\d.])(?=\d)(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|"
                    r"1?\d?\d)(?![\d.])|\b(?=[0-9a-f]{1,4}:)(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b|"
                    r"(?:[0-9a-f]{1,4}:){1,6}:(?:[0-9a-f]{1,4}:?){1,6}\b)",
                    flags,
                ),
            ),
            (
                "ids.phone",
                re.compile(
                    # international: +44 20 7946 0958, +1-202-555-0143
                    r"(?<![\w+])\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?\d{1,4}(?:[\s.-]?\d{2,4})"
                    r"{2,4}(?!\d)|"
                    # North American: (202) 555-0143, 202-555-0143, 202.555.0143
                    r"(?<!\d)(?=[(\d])(?:\(\d{3}\)\s?|\d{3}[.-])\d{3}[.-]\d{4}(?!\d)|"
                    # Chinese mobile (also split 3-4-4) and landline 010-12345678
                    r"(?<!\d)1[3-9]\d[\s-]?\d{4}[\s-]?\d{4}(?!\d)|(?<!\d)0\d{2,3}-\d{7,8}(?!\d)"
                ),
            ),
            # IBAN: country code, check digits, then blocks (upper case, as written)
            (
                "ids.iban",
                re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){3,7}(?:\s?[A-Z0-9]{1,3})?\b"),
            ),
            # payment card numbers written in groups of four (issuers start with 3-6)
            ("ids.card", re.compile(r"(?<!\d)[3-6]\d{3}(?:[\s-]\d{4}){2}[\s-]\d{1,7}(?!\d)")),
            (
                "ids.record",
                re.compile(
                    rf"(?:{_ZH_RECORD_WORDS})\s*(?:是|为)?\s*[:#]?\s*(?=[A-Za-z0-9-]*\d)"
                    r"[A-Za-z0-9-]{4,}"
                ),
            ),
            # "#98231" on its own is a ticket or issue reference.
            ("ids.record", re.compile(r"(?<![\w&])#\d{3,}\b")),
        )
        # English record numbers: a token with digits, and a record word just before it.
        self._digit_token = re.compile(r"(?<![\w-])[A-Za-z0-9-]*\d[A-Za-z0-9-]*")
        self._lookback_words = re.compile(r"[a-z]+\.?|#", flags)
        self._mixed = re.compile(r"(?=[A-Za-z0-9-]*\d)(?=[0-9-]*[A-Za-z])[A-Za-z0-9-]{4,}")
        # Long digit runs: account numbers, tracking numbers, ID cards (17 digits + X).
        self._digits = re.compile(r"(?<![\d.,])\d{6,}[xX]?(?![\d.,])")
        # Round numbers ("1000000") are quantities, and digits glued to arithmetic are a
        # calculation, not identifiers.
        self._round = re.compile(r"000[xX]?$")
        self._arithmetic = re.compile(r"[-+*/^=\u00d7\u00f7%]\s*$|^\s*[-+*/^=\u00d7\u00f7%]")
        # Codes that mix letters and digits: "AB12CD34", "A1B2C3", "X123456".
        self._code_token = re.compile(r"(?<![\w-])(?=[A-Za-z]*\d)[A-Za-z0-9]{6,}(?![\w-])")
        self._unit_word = re.compile(rf"\d+(?:{_UNIT_SUFFIXES})", flags)
        self._runs = re.compile(r"[A-Za-z]+|\d+")
        self._prefixed_number = re.compile(r"([A-Za-z]{1,3})(\d+)")

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
            bare = last in _RECORD_WORDS or (
                last == "#" and len(words) > 1 and (words[-2].lower() in _RECORD_WORDS)
            )
            marked = last in _MARKERS and len(words) > 1 and words[-2].lower() in _RECORD_WORDS
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
