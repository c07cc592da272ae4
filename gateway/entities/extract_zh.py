"""Reads the slots of a Chinese text with lexicons and character-level rules.

spaCy's blank `zh` pipeline only splits characters, so nothing here needs a parse.
Names are taken first (longest match), which keeps 三亚 and 三星 from becoming the
number 3, 上海 from being read as 上 + 海, and 比亚迪 from being a comparison.
"""

from __future__ import annotations

import re

from gateway.entities.direction_zh import ChineseDirections, Term
from gateway.entities.lexicon_zh import ChineseLexicon
from gateway.entities.numbers import ZH_NUMERAL_CHARS, canonical, digits, parse_chinese
from gateway.entities.persons import chinese_persons
from gateway.entities.polarity import Polarity, surface_map
from gateway.entities.slots import SlotBuilder, TextSlots
from gateway.entities.terms import chinese_content, chinese_tokens
from gateway.entities.text import Masked, alternation, normalize
from gateway.entities.units import Units

_SHORT_NUMBER = r"\d{1,2}|[零〇一二三四五六七八九十]{1,3}"
_RUN = rf"[{ZH_NUMERAL_CHARS}]+(?:点[零〇一二三四五六七八九]+)?"
# A number glued to these is a quantity, not a code: 5g, 1gb, 10km, 3x.
_SUFFIXES = "km|kg|mb|gb|tb|kb|ml|mg|mm|cm|g|m|t|l|w|v|h|x|p|s|k|mah|hz|ghz|fps|mph|kmh"
# Latin words in Chinese text that are not names.
_LATIN_NOT_NAMES = frozenset(
    {"app", "apps", "ok", "vs", "etc", "diy", "bug", "pk", "ps", "id", "a", "b"}
)


class ChineseExtractor:
    """Compiled once per comparator; `extract` is pure."""

    def __init__(self) -> None:
        lex = ChineseLexicon.packaged()
        unit_data = Units.packaged()
        self._lex, self._units = lex, unit_data
        self._alias_table = {key.lower(): value for key, value in lex.ALIASES.items()}
        self._aliases = re.compile(alternation(self._alias_table))
        self._url = re.compile(r"(?:https?://|www\.)[a-z0-9./?=&%#_:~+-]+[a-z0-9/]")
        self._email = re.compile(r"(?<![a-z0-9.+_-])[a-z0-9.+_-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+")
        self._dotted = re.compile(
            r"(?<![a-z0-9_.])[a-z_][a-z0-9_]+(?:\.[a-z_][a-z0-9_]+)+(?:\(\))?"
        )
        self._code = re.compile(r"(?<![a-z0-9@.$-])[a-z0-9]+(?:[-_][a-z0-9]+)*(?![a-z0-9@])")
        self._not_code = re.compile(rf"^\d+(?:\.\d+)?(?:{_SUFFIXES})$")
        self._names = re.compile(alternation(lex.ENTITY_NAMES))
        self._holidays = re.compile(alternation(lex.HOLIDAYS))
        self._time_words = re.compile(alternation(lex.TIME_WORDS))
        self._compile_dates(lex)
        self._tier_pairs = re.compile(
            rf"({alternation(lex.TIER_PREFIXES)})(?:{alternation(lex.TIER_SUFFIXES)})"
        )
        self._tier_words = re.compile(alternation(lex.TIER_WORDS))
        self._latin_tiers = re.compile(rf"(?<![a-z])({alternation(lex.LATIN_TIERS)})(?![a-z])")
        self._not_negation = re.compile(alternation(lex.NOT_NEGATION))
        self._a_not_a = re.compile(r"([\u4e00-\u9fff]{1,2})[不没]\1")
        self._question_tail = re.compile(r"[不没](?=\s*(?:[?!.~\u3002]|$))")
        self._negation = re.compile(alternation(lex.NEGATIONS))
        self._not_numbers = re.compile(alternation(lex.NOT_NUMBERS) + "|十分(?!钟)")  # 十分 = very
        self._compile_quantities(unit_data)
        polarity = Polarity.packaged()
        self._not_polarity = re.compile(alternation(polarity.ZH_NOT_POLARITY))
        self._before_after = re.compile(
            rf"(?:{alternation(polarity.ZH_EVENTS_BEFORE_AFTER)})(前|后)"
        )
        self._polarity_table = surface_map(polarity.ZH_AXES)
        self._polarity = re.compile(alternation(self._polarity_table))
        self._latin = re.compile(
            r"(?<![a-z0-9])[a-z][a-z0-9+#.'-]*[a-z0-9+#]|(?<![a-z0-9])[a-z](?![a-z0-9])"
        )
        self._directions = ChineseDirections()

    def _compile_dates(self, lex: ChineseLexicon) -> None:
        """Years, month-days, weekdays, seasons and clock times."""
        self._year = re.compile(r"(\d{4}|[零〇一二三四五六七八九]{4})年")
        self._month_day = re.compile(rf"({_SHORT_NUMBER})月({_SHORT_NUMBER})[日号]")
        self._month = re.compile(rf"(?<![个几每按上下本这])({_SHORT_NUMBER})月份?")
        self._day = re.compile(rf"({_SHORT_NUMBER})[日号](?![子元线楼码位])")
        self._weekday = re.compile(r"(?:星期|礼拜|周)([一二三四五六日天])(?![次遍回个])")
        self._weekend = re.compile(r"周末")
        self._seasons = re.compile(alternation(lex.SEASONS))
        self._clock = re.compile(
            r"(\d{1,2}|[两三四五六七八九十]|十[一二])点(?![零〇一二三四五六七八九\d])(钟|半)?"
        )

    def _compile_quantities(self, unit_data: Units) -> None:
        """Percentages, ordinals, halves and numbers with their units."""
        self._percent = re.compile(rf"百分之({_RUN}|\d+(?:\.\d+)?)")
        self._ordinal = re.compile(rf"第({_RUN}|\d+)")
        self._half = re.compile(
            rf"(?<![{ZH_NUMERAL_CHARS}\d])({_RUN}|\d+)个半|半(?=个?(?:小时|钟头|天|年|月|斤|公斤|杯|价))"
        )
        units = alternation(unit_data.ZH_UNITS)
        self._quantity = re.compile(
            rf"(?<![a-z0-9.])(?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|{_RUN})"
            r"\s*(?P<scale>[万亿]|千(?![克米瓦卡])|百(?![分]))?"
            rf"\s*个?\s*(?:(?P<unit>{units})(?![a-z]))?"
        )
        standalone = [
            u
            for u in unit_data.ZH_UNITS
            if u not in unit_data.ZH_AFTER_NUMBER_ONLY and not u.isascii()
        ]
        self._standalone_units = re.compile(alternation(standalone))
        self._latin_units = re.compile(r"(?<![a-z])(kg|km|gb|mb|tb|kb|ml|mph)(?![a-z])")
        self._periods = re.compile(alternation(unit_data.ZH_PERIODS))

    def extract(self, text: str) -> TextSlots:
        lowered = normalize(text).lower()
        masked = Masked(self._aliases.sub(lambda m: self._alias_table[m.group(0)], lowered))
        slots = SlotBuilder()
        terms: list[Term] = []
        self._identifiers(masked, slots, terms)
        self._names_from_lexicon(masked, slots, terms)
        self._dates(masked, slots)
        self._tiers(masked, slots)
        slots.negations = self._count_negations(masked.text)
        self._quantities(masked, slots, terms)
        self._polarities(masked, slots)
        self._latin_names(masked, slots, terms)
        slots.directions.update(self._directions.find(masked.low, terms))
        slots.persons = chinese_persons(masked.low)
        slots.tokens = chinese_tokens(masked.low)
        slots.content = chinese_content(masked.text)  # what no other slot took
        return slots.freeze("zh", masked.low)

    def _identifiers(self, masked: Masked, slots: SlotBuilder, terms: list[Term]) -> None:
        for pattern in (self._url, self._email, self._dotted):
            for match in masked.take(pattern):
                slots.ids.add(match.group(0))
                terms.append(Term(match.start(), match.end(), match.group(0)))
        spans = []
        for match in self._code.finditer(masked.text):
            token = match.group(0)
            has_both = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
            if has_both and not self._not_code.match(token):
                slots.ids.add(token)
                terms.append(Term(match.start(), match.end(), token))
                spans.append(match.span())
        masked.blank(spans)

    def _names_from_lexicon(self, masked: Masked, slots: SlotBuilder, terms: list[Term]) -> None:
        for match in masked.take(self._names):
            name = match.group(0)
            slots.entities.add(name)
            terms.append(Term(match.start(), match.end(), name))
            region = self._lex.REGION_OF.get(name)
            while region is not None:  # 西湖 -> 杭州 -> 浙江
                slots.mentions.add(region)
                region = self._lex.REGION_OF.get(region)

    def _dates(self, masked: Masked, slots: SlotBuilder) -> None:
        slots.dates.update(self._lex.HOLIDAYS[m.group(0)] for m in masked.take(self._holidays))
        slots.time_words.update(
            self._lex.TIME_WORDS[m.group(0)] for m in masked.take(self._time_words)
        )
        slots.dates.update(f"y{_number(m.group(1))}" for m in masked.take(self._year))
        for match in masked.take(self._month_day):
            slots.dates.add(f"m{_number(match.group(1))}-d{_number(match.group(2))}")
        slots.dates.update(f"m{_number(m.group(1))}" for m in masked.take(self._month))
        slots.dates.update(f"d{_number(m.group(1))}" for m in masked.take(self._day))
        slots.dates.update(self._lex.WEEKDAYS[m.group(1)] for m in masked.take(self._weekday))
        slots.dates.update("weekend" for _ in masked.take(self._weekend))
        slots.dates.update(self._lex.SEASONS[m.group(0)] for m in masked.take(self._seasons))
        for match in masked.take(self._clock):
            minutes = "30" if match.group(2) == "半" else "00"
            slots.dates.add(f"t{_number(match.group(1))}:{minutes}")

    def _tiers(self, masked: Masked, slots: SlotBuilder) -> None:
        slots.tiers.update(
            self._lex.TIER_PREFIXES[m.group(1)] for m in masked.take(self._tier_pairs)
        )
        slots.tiers.update(self._lex.TIER_WORDS[m.group(0)] for m in masked.take(self._tier_words))
        slots.tiers.update(
            self._lex.LATIN_TIERS[m.group(1)] for m in masked.take(self._latin_tiers)
        )

    def _count_negations(self, text: str) -> int:
        text = self._not_negation.sub(" ", text)
        text = self._a_not_a.sub(" ", text)  # 要不要, 有没有: a yes/no question
        text = self._question_tail.sub(" ", text)  # 好玩不? 有没? the same question
        return len(self._negation.findall(text))

    def _quantities(self, masked: Masked, slots: SlotBuilder, terms: list[Term]) -> None:
        masked.take(self._not_numbers)
        for match in masked.take(self._percent):
            slots.quantity(_number(match.group(1)), "percent")
        slots.numbers.update(f"#{_number(m.group(1))}" for m in masked.take(self._ordinal))
        for match in masked.take(self._half):
            whole = float(_number(match.group(1))) if match.group(1) else 0.0
            slots.numbers.add(canonical(whole + 0.5))
        for match in masked.take(self._quantity):
            number = self._quantity_number(match)
            if number is None:
                continue
            unit = self._units.ZH_UNITS.get(match.group("unit") or "")
            slots.quantity(number, unit)
            if unit:
                terms.append(Term(match.start("unit"), match.end("unit"), unit))
        for pattern, table in (
            (self._standalone_units, self._units.ZH_UNITS),
            (self._latin_units, self._units.ZH_UNITS),
            (self._periods, self._units.ZH_PERIODS),
        ):
            for match in masked.take(pattern):
                slots.units.add(table[match.group(0)])
                terms.append(Term(match.start(), match.end(), table[match.group(0)]))

    @staticmethod
    def _quantity_number(match: re.Match[str]) -> str | None:
        raw, scale = match.group("num"), match.group("scale")
        if raw in ("百", "千", "万", "亿") or (raw[0] in "百千万亿" and not scale):
            return None  # 百度, 千万: a unit character alone is not a number
        multiplier = {"万": 10**4, "亿": 10**8, "千": 1000, "百": 100}.get(scale or "", 1)
        if raw[0].isdigit():
            return digits(raw, multiplier)
        value = parse_chinese(raw)
        return None if value is None else canonical(value * multiplier)

    def _polarities(self, masked: Masked, slots: SlotBuilder) -> None:
        masked.take(self._not_polarity)
        for match in masked.take(self._before_after):
            slots.polarity.add(("time", "before" if match.group(1) == "前" else "after"))
        for match in masked.take(self._polarity):
            slots.polarity.update(self._polarity_table[match.group(0)])

    def _latin_names(self, masked: Masked, slots: SlotBuilder, terms: list[Term]) -> None:
        for match in masked.take(self._latin):
            word = match.group(0)
            if len(word) > 1 and word not in _LATIN_NOT_NAMES and word not in self._units.ZH_UNITS:
                slots.entities.add(word)
                terms.append(Term(match.start(), match.end(), word))


def _number(raw: str) -> str:
    if raw[0].isdigit():
        return digits(raw)
    value = parse_chinese(raw)
    return raw if value is None else canonical(value)
