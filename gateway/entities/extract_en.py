"""Reads the slots of an English text: regular expressions over the normalised text,
plus spaCy's entities from the memoised parse.

The order matters: each step blanks what it consumed (see `text.Masked`), so a date's
digits are not also numbers, `iPhone 15 Pro` gives a number and a tier but no ID, and
`New York` is a name rather than the polarity word `new`.
"""

from __future__ import annotations

import re
from typing import Any

from gateway.entities.lexicon_en import EnglishLexicon
from gateway.entities.names_en import EnglishNames
from gateway.entities.numbers import (
    EN_ORDINALS,
    EN_SCALES,
    EN_TENS,
    EN_UNITS,
    digits,
    parse_english,
)
from gateway.entities.persons import english_persons
from gateway.entities.polarity import Polarity, surface_map
from gateway.entities.slots import SlotBuilder, TextSlots
from gateway.entities.terms import english_content, english_tokens
from gateway.entities.text import Masked, alternation, keyed, normalize, phrase_key, word_pattern
from gateway.entities.units import Units

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*"
_SCALE = {"k": 1000, "thousand": 1000, "million": 10**6, "mil": 10**6, "billion": 10**9,
          "bn": 10**9}  # fmt: skip
# A number glued to these is a quantity or an ordinal, not a code: 5km, 3rd, 1080p, 3-day.
_SUFFIXES = (
    "km|kg|mb|gb|tb|kb|ml|mg|mm|cm|lb|lbs|oz|mph|kph|kmh|hz|khz|mhz|ghz|fps|mah|kw|kwh|w|v|"
    "s|h|hr|hrs|min|mins|m|g|l|st|nd|rd|th|am|pm|p|x|d|yr|yrs"
)
# A single digit glued to "s" names a model ("iPhone 6s", "Moto G5s") far more often than
# seconds, and a decade has two digits ("the 60s"). As a code, "6" against "6s" is an ID
# mismatch instead of the same number with or without a unit. The cost is one-sided:
# "in 3s" no longer equals "in 3 seconds", a missed hit, never a wrong one.
_MODEL_SUFFIX_S = re.compile(r"^\ds$")
# Currency codes written before the amount: "Rs. 500", "INR 20000", "USD 100".
_CURRENCY_PREFIXES = "rs|inr|usd|eur|gbp|cad|aud|rmb|cny|jpy|hkd|sgd|chf"


_DECADE_WORDS = {
    "twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60,
    "seventies": 70, "eighties": 80, "nineties": 90,
}  # fmt: skip


class EnglishExtractor:
    """Compiled once per comparator; `extract` is pure."""

    def __init__(self) -> None:
        lex = EnglishLexicon.packaged()
        unit_data = Units.packaged()
        self._lex, self._units = lex, unit_data
        self._names = EnglishNames()
        self._url = re.compile(r"\b(?:https?://|www\.)[^\s]+[^\s.,;:!?)\"']")
        self._email = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
        self._backticks = re.compile(r"`([^`]+)`")
        self._dotted = re.compile(
            r"(?<![\w.])[a-z_][a-z0-9_]+(?:\.[a-z_][a-z0-9_]+)+(?:\(\))?(?![\w])"
        )
        self._snake = re.compile(r"(?<![\w])[a-z0-9]+(?:_[a-z0-9]+)+(?![\w])")
        self._code = re.compile(r"(?<![\w@/.$€£¥-])[a-z0-9]+(?:[-_][a-z0-9]+)*(?![\w@])")
        unit_words = alternation(u for u in unit_data.EN_UNITS if u.isalpha())
        self._not_code = re.compile(rf"^\d+(?:\.\d+)?(?:(?:-[a-z]+)+|{_SUFFIXES}|{unit_words})$")
        self._holidays_table = keyed(lex.HOLIDAYS)
        self._holidays = word_pattern(lex.HOLIDAYS)
        self._compile_dates(lex)
        self._compile_quantities(unit_data)
        self._last = re.compile(r"\blast\b")
        self._free_idioms = word_pattern(lex.FREE_IDIOMS)
        self._free_compound = re.compile(r"\b[a-z]+-free\b")
        self._tier_words = word_pattern(lex.TIERS)
        self._tier_context = re.compile(
            rf"(?:[\s-]{{1,3}}(?:{alternation(lex.TIERS)})){{0,3}}[\s-]{{1,3}}"
            rf"(?:{alternation(lex.TIER_CONTEXTS)})\b"
        )
        self._after_number_or_tier = re.compile(rf"(?:\d|\b(?:{alternation(lex.TIERS)}))\s+$")
        self._arithmetic = re.compile(
            r"\s{1,3}(?:\d|(?:one|two|three|four|five|six|seven|eight|nine|ten)\b)"
        )
        self._sizes_table = keyed(lex.SIZES)
        sizes = alternation(lex.SIZES).replace(r"\ ", "[ -]")
        self._sizes = re.compile(
            rf"\b(?:a|an|the|one|two|three|\d+|my|your|our)\s+(?P<size>{sizes})\s+(?=[a-z])"
        )
        polarity = Polarity.packaged()
        self._not_polarity = word_pattern(polarity.EN_NOT_POLARITY)
        self._quantity_position = polarity.EN_QUANTITY_POSITION
        self._split_phrasals = polarity.EN_SPLIT_PHRASALS
        self._polarity_table = {phrase_key(k): v for k, v in surface_map(polarity.EN_AXES).items()}
        self._polarity = word_pattern(self._polarity_table)
        # "why or why not", "whether or not", "not only": no negated claim.
        self._not_negation = word_pattern(lex.NOT_NEGATION)
        self._negation = re.compile(
            rf"\b(?:{alternation(w for w in lex.NEGATIONS if w != 'no')}|no(?!\.?\s*\d))\b|n't\b"
        )

    def _compile_dates(self, lex: EnglishLexicon) -> None:
        """Relative days, time words, dates, months, seasons, decades, clock times, years."""
        month_names = alternation(lex.MONTHS)
        modifiers = alternation(lex.RELATIVE_MODIFIERS)
        nouns = alternation(lex.RELATIVE_NOUNS)
        self._relative = re.compile(rf"\b({modifiers})\s+({nouns})\b")
        self._day_part = re.compile(
            rf"\b(tomorrow|yesterday|today)\s+({alternation(lex.DAY_PARTS)})\b"
        )
        self._not_time_words = word_pattern(lex.NOT_TIME_WORDS)
        self._time_table = keyed(lex.TIME_WORDS)
        self._time_words = word_pattern(lex.TIME_WORDS)
        self._iso_date = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
        self._numeric_date = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{2,4})\b")
        self._month_day = re.compile(
            rf"\b({month_names})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?"
        )
        self._day_month = re.compile(
            rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({month_names})\b\.?(?:,?\s+(\d{{4}})\b)?"
        )
        self._month_year = re.compile(rf"\b({month_names})\.?,?\s+(\d{{4}})\b")
        full_months = alternation(m for m in lex.MONTHS if len(m) > 3 or m == "may")
        self._month = re.compile(rf"\b({full_months})\b")
        self._month_context = re.compile(
            r"\b(?:in|of|early|late|mid|until|till|since|by|before|after|during|this|next|last"
            r"|every|each|from|to|through|between|and)\s+$"
        )
        self._weekdays = word_pattern(lex.WEEKDAYS)
        self._seasons = word_pattern(lex.SEASONS)
        self._fall = re.compile(r"\b(?:in|during|the)\s+(?:the\s+)?fall\b")
        self._decade = re.compile(r"\b(?:the\s+)?'?(\d{2}|1[89]\d0|20\d0)'?s\b")
        # "in her forties", "the sixties": the decade words the number patterns miss.
        self._decade_word = re.compile(rf"\b({alternation(_DECADE_WORDS)})\b")
        self._clock = re.compile(
            r"\b(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?![\w])|\b(\d{1,2}):(\d{2})\b"
        )
        self._noon = re.compile(r"\b(noon|midday|midnight)\b")
        self._year = re.compile(r"(?<![\w$€£¥.,])(1[89]\d\d|20\d\d)(?![\w.,%]|\s*-\s*\w)")

    def _compile_quantities(self, unit_data: Units) -> None:
        """Numbers (digits and words) with their units, and ordinals."""
        units = alternation(unit_data.EN_UNITS).replace(r"\ ", r"\s+")
        self._unit_table = keyed(unit_data.EN_UNITS)
        self._digits_quantity = re.compile(
            rf"(?<![\w.])(?P<cur>[$€£¥₹₩]|(?:{_CURRENCY_PREFIXES})\.?(?=\s?\d))?\s?(?P<num>{_NUMBER})"
            r"(?:\s?(?P<scale>k|thousand|million|mil|billion|bn)(?![\w]))?"
            rf"(?:\s?-?\s?(?P<unit>{units})(?![\w]))?"
        )
        number_words = alternation((*EN_UNITS, *EN_TENS, *EN_SCALES, "dozen"))
        self._word_quantity = re.compile(
            rf"\b(?P<words>(?:an?\s+(?=(?:hundred|thousand|million|billion|dozen)\b))?"
            rf"(?:{number_words})(?:(?:[\s-]+|\s+and\s+)(?:{number_words}))*)\b"
            rf"(?:\s?-?\s?(?P<unit>{units})(?![\w]))?"
        )
        after_number = alternation(unit_data.EN_AFTER_NUMBER_ONLY)
        self._unit_in_context = re.compile(
            r"\b(?:per|a|an|each|every|how\s+many|how\s+much|several|few|couple\s+of|"
            rf"number\s+of|many)\s+(?P<unit>{after_number})(?![\w])"
        )
        self._free_standing_units = word_pattern(
            u for u in unit_data.EN_UNITS if u not in unit_data.EN_AFTER_NUMBER_ONLY and u.isascii()
        )
        self._symbol_units = re.compile(r"°\s?[cf]\b|%")
        self._digit_ordinal = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
        ordinals = alternation(EN_ORDINALS)
        tens = alternation(EN_TENS)
        self._word_ordinal = re.compile(rf"\b(?:({tens})[\s-])?({ordinals})\b")

    def extract(self, text: str, doc: Any) -> TextSlots:
        masked = Masked(self._names.apply_aliases(normalize(text)))
        slots = SlotBuilder()
        self._identifiers(masked, slots)
        self._codes(masked, slots)  # before names: "gpt-4o-mini" is one code
        self._times(masked, slots)
        self._dates(masked, slots)
        self._names.lexicon(masked, slots)  # before numbers and polarity: "New York"
        self._quantities(masked, slots)
        self._ordinals(masked, slots)
        self._tiers(masked, slots)
        self._polarities(masked, slots)
        slots.negations = len(self._negation.findall(self._not_negation.sub(" ", masked.low)))
        self._names.recognise(masked, doc, slots)
        self._names.directions(masked.low, slots)
        slots.persons, slots.subject = english_persons(masked.low)
        slots.tokens = english_tokens(masked.low)
        slots.content = english_content(masked.text)  # what no other slot took
        return slots.freeze("en", masked.low)

    def _identifiers(self, masked: Masked, slots: SlotBuilder) -> None:
        for pattern in (self._url, self._email):
            slots.ids.update(m.group(0).lower() for m in masked.take(pattern))
        for match in masked.take(self._backticks):
            slots.ids.add(match.group(1).strip().lower())

    def _times(self, masked: Masked, slots: SlotBuilder) -> None:
        masked.take(self._not_time_words)
        for match in masked.take(self._holidays):
            slots.dates.add(self._holidays_table[phrase_key(match.group(0))])
        for match in masked.take(self._day_part):
            slots.time_words.add(f"{match.group(1)} {match.group(2)}")
        for match in masked.take(self._relative):
            noun = "autumn" if match.group(2) == "fall" else match.group(2)
            slots.time_words.add(f"{self._lex.RELATIVE_MODIFIERS[match.group(1)]} {noun}")
        for match in masked.take(self._time_words):
            slots.time_words.add(self._time_table[phrase_key(match.group(0))])

    def _dates(self, masked: Masked, slots: SlotBuilder) -> None:
        for match in masked.take(self._iso_date):
            year, month, day = match.groups()
            slots.dates.add(f"y{int(year)}-m{int(month)}-d{int(day)}")
        for match in masked.take(self._numeric_date):
            slots.dates.add("/".join(str(int(part)) for part in match.groups()))
        for match in masked.take(self._month_day):
            month, day, year = match.groups()
            slots.dates.add(_date(year, self._lex.MONTHS[month], day))
        for match in masked.take(self._day_month):
            day, month, year = match.groups()
            slots.dates.add(_date(year, self._lex.MONTHS[month], day))
        for match in masked.take(self._month_year):
            month, year = match.groups()
            slots.dates.add(_date(year, self._lex.MONTHS[month], None))
        spans = []
        for match in self._month.finditer(masked.text):
            if self._is_month(masked, match):
                slots.dates.add(f"m{self._lex.MONTHS[match.group(1)]}")
                spans.append(match.span())
        masked.blank(spans)
        slots.dates.update(
            self._lex.WEEKDAYS[phrase_key(m.group(0))] for m in masked.take(self._weekdays)
        )
        slots.dates.update("autumn" for _ in masked.take(self._fall))
        slots.dates.update(self._lex.SEASONS[m.group(0)] for m in masked.take(self._seasons))
        for match in masked.take(self._decade):
            slots.dates.add(f"{int(match.group(1)) % 100:02d}s")
        for match in masked.take(self._decade_word):
            slots.dates.add(f"{_DECADE_WORDS[match.group(1)]:02d}s")
        for match in masked.take(self._clock):
            hour, minute, half = (match.group(1), match.group(2), match.group(3))
            if hour is None:
                hour, minute, half = match.group(4), match.group(5), None
            hour_24 = int(hour) % 12 + (12 if half and half.startswith("p") else 0)
            slots.dates.add(f"t{hour_24 if half else int(hour)}:{int(minute or 0):02d}")
        for match in masked.take(self._noon):
            slots.dates.add("t0:00" if match.group(1) == "midnight" else "t12:00")

    def _is_month(self, masked: Masked, match: re.Match[str]) -> bool:
        """`May` the month, not `may` the verb: capitalised mid-sentence, or after a
        preposition ("in may")."""
        name = match.group(1)
        if name not in self._lex.AMBIGUOUS_MONTHS:
            return True
        start = match.start()
        before = masked.low[:start]
        capitalised = masked.cased[start].isupper() and before.strip() != ""
        sentence_start = before.rstrip().endswith((".", "?", "!", ":", '"'))
        after_preposition = self._month_context.search(before[-24:])
        return (capitalised and not sentence_start) or after_preposition is not None

    def _codes(self, masked: Masked, slots: SlotBuilder) -> None:
        for pattern in (self._dotted, self._snake):
            for match in masked.take(pattern):
                token = match.group(0)
                if min(len(part) for part in token.split(".")) >= 2 or "_" in token:
                    slots.ids.add(token)
        spans = []
        for match in self._code.finditer(masked.text):
            token = match.group(0)
            model = _MODEL_SUFFIX_S.match(token) is not None
            if _has_digit_and_letter(token) and (model or not self._not_code.match(token)):
                slots.ids.add(token)
                spans.append(match.span())
        masked.blank(spans)

    def _quantities(self, masked: Masked, slots: SlotBuilder) -> None:
        years = []
        for match in self._year.finditer(masked.text):  # a year, unless a unit follows
            amount = self._digits_quantity.match(masked.text, match.start())
            if amount is None or not amount.group("unit"):
                slots.dates.add(f"y{match.group(1)}")
                years.append(match.span())
        masked.blank(years)
        for match in masked.take(self._digits_quantity):
            scale = _SCALE.get(match.group("scale") or "", 1)
            number = digits(match.group("num"), scale)
            slots.quantity(number, self._unit(match.group("cur"), match.group("unit")))
        for match in masked.take(self._word_quantity):
            value = parse_english(match.group("words").replace("-", " ").split())
            if value is not None:
                slots.quantity(str(value), self._unit(None, match.group("unit")))
        for match in masked.take(self._unit_in_context):
            slots.units.add(self._unit_table[phrase_key(match.group("unit"))])
        for match in masked.take(self._free_standing_units):
            slots.units.add(self._unit_table[phrase_key(match.group(0))])
        for match in masked.take(self._symbol_units):
            slots.units.add("percent" if match.group(0) == "%" else _degrees(match.group(0)))

    def _unit(self, symbol: str | None, unit: str | None) -> str | None:
        if symbol:
            symbol = symbol.rstrip(". ")
            return self._units.EN_CURRENCY_SYMBOLS.get(symbol) or self._unit_table[symbol]
        if unit:
            return self._unit_table[phrase_key(" ".join(unit.split()))]
        return None

    def _ordinals(self, masked: Masked, slots: SlotBuilder) -> None:
        slots.numbers.update(f"#{digits(m.group(1))}" for m in masked.take(self._digit_ordinal))
        for match in masked.take(self._word_ordinal):
            tens = EN_TENS.get(match.group(1) or "", 0)  # "twenty-first"
            slots.numbers.add(f"#{tens + EN_ORDINALS[match.group(2)]}")
        slots.numbers.update("#last" for _ in masked.take(self._last))

    def _tiers(self, masked: Masked, slots: SlotBuilder) -> None:
        masked.take(self._free_idioms)
        masked.take(self._free_compound)
        for match in self._sizes.finditer(masked.low):
            slots.tiers.add(self._sizes_table[phrase_key(match.group("size"))])
            masked.blank([match.span("size")])
        spans = []
        for match in self._tier_words.finditer(masked.text):
            if self._is_tier(masked, match):
                slots.tiers.add(self._lex.TIERS[match.group(0)])
                spans.append(match.span())
        masked.blank(spans)

    def _is_tier(self, masked: Masked, match: re.Match[str]) -> bool:
        word, start, end = match.group(0), match.start(), match.end()
        if word in self._lex.STRONG_TIERS or word == "free":
            return True
        if word == "plus" and self._arithmetic.match(masked.low, end):
            return False  # "2 plus 2"
        before = masked.low[:start]
        mid_sentence = before.strip() != "" and not before.rstrip().endswith((".", "?", "!", ":"))
        if masked.cased[start].isupper() and mid_sentence:
            return True
        if self._tier_context.match(masked.low, end):
            return True
        return self._after_number_or_tier.search(before[-24:]) is not None

    def _polarities(self, masked: Masked, slots: SlotBuilder) -> None:
        masked.take(self._not_polarity)
        for pattern, pole in self._quantity_position:
            if pattern.search(masked.low):
                slots.polarity.add(pole)
        for pattern, pole in self._split_phrasals:
            if masked.take(pattern):
                slots.polarity.add(pole)
        for match in masked.take(self._polarity):
            slots.polarity.update(self._polarity_table[phrase_key(match.group(0))])


def _date(year: str | None, month: int, day: str | None) -> str:
    parts = [f"y{int(year)}"] if year else []
    parts.append(f"m{month}")
    if day:
        parts.append(f"d{int(day)}")
    return "-".join(parts)


def _degrees(symbol: str) -> str:
    return "fahrenheit" if symbol.endswith("f") else "celsius"


def _has_digit_and_letter(token: str) -> bool:
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
