"""English word lists for the slot extractors: data (`gateway/rules/data/en/entities.yaml`,
weekday and month names from `shared/calendar.yaml`), loaded on first use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from gateway.entities.packaged import PackagedTables
from gateway.rules.compile import RuleBook, RuleFile


@dataclass(frozen=True, slots=True)
class EnglishLexicon(PackagedTables):
    """The word lists and tables of `gateway/rules/data/en/entities.yaml`, by the names
    the extractors use."""

    MONTHS: Mapping[str, int]
    AMBIGUOUS_MONTHS: frozenset[str]
    WEEKDAYS: Mapping[str, str]
    HOLIDAYS: Mapping[str, str]
    SEASONS: Mapping[str, str]
    TIME_WORDS: Mapping[str, str]
    NOT_TIME_WORDS: tuple[str, ...]
    RELATIVE_MODIFIERS: Mapping[str, str]
    RELATIVE_NOUNS: tuple[str, ...]
    DAY_PARTS: tuple[str, ...]
    NEGATIONS: tuple[str, ...]
    NOT_NEGATION: tuple[str, ...]
    TIERS: Mapping[str, str]
    STRONG_TIERS: frozenset[str]
    TIER_CONTEXTS: tuple[str, ...]
    SIZES: Mapping[str, str]
    FREE_IDIOMS: tuple[str, ...]
    ALIASES: Mapping[str, str]
    CASED_ALIASES: Mapping[str, str]
    ENTITY_NAMES: frozenset[str]
    NOT_NAMES: frozenset[str]
    GENERIC_NAME_WORDS: frozenset[str]
    STOPWORDS: frozenset[str]
    DIRECTION_VERBS: tuple[str, ...]
    ENDPOINT_STOPS: tuple[str, ...]
    COMPARATIVE_HEADS: tuple[str, ...]

    @classmethod
    def load(cls, book: RuleBook) -> Self:
        data = book.file("en/entities")
        calendar = book.file("shared/calendar")
        return cls(
            MONTHS=_months(calendar, data),
            AMBIGUOUS_MONTHS=frozenset(data.words("ambiguous_months")),
            WEEKDAYS=_weekdays(calendar, data),
            HOLIDAYS=data.texts("holidays"),
            SEASONS=data.texts("seasons"),
            TIME_WORDS=data.texts("time_words"),
            NOT_TIME_WORDS=data.words("not_time_words"),
            RELATIVE_MODIFIERS=data.texts("relative_modifiers"),
            RELATIVE_NOUNS=(*data.words("relative_nouns"), *calendar.words("weekdays")),
            DAY_PARTS=data.words("day_parts"),
            NEGATIONS=data.words("negations"),
            NOT_NEGATION=data.words("not_negation"),
            TIERS=data.texts("tiers"),
            STRONG_TIERS=frozenset(data.words("strong_tiers")),
            TIER_CONTEXTS=data.words("tier_contexts"),
            SIZES=data.texts("sizes"),
            FREE_IDIOMS=data.words("free_idioms"),
            ALIASES=data.texts("aliases"),
            CASED_ALIASES=data.texts("cased_aliases"),
            ENTITY_NAMES=frozenset(data.words("entity_names")),
            NOT_NAMES=frozenset(data.words("not_names")),
            GENERIC_NAME_WORDS=frozenset(data.words("generic_name_words")),
            STOPWORDS=frozenset(data.words("stopwords")),
            DIRECTION_VERBS=data.words("direction_verbs"),
            ENDPOINT_STOPS=data.words("endpoint_stops"),
            COMPARATIVE_HEADS=data.words("comparative_heads"),
        )


def _months(calendar: RuleFile, data: RuleFile) -> dict[str, int]:
    """Month names and three-letter abbreviations to their numbers, plus extras ("sept")."""
    months = {name: number for number, name in enumerate(calendar.words("months"), 1)}
    for number, short in enumerate(calendar.words("month_abbreviations"), 1):
        months.setdefault(short, number)
    return months | data.numbers("month_extras")


def _weekdays(calendar: RuleFile, data: RuleFile) -> dict[str, str]:
    """Weekday names and their plurals to the name ("mondays" -> "monday"), plus extras."""
    names = calendar.words("weekdays")
    return (
        {name: name for name in names}
        | {f"{name}s": name for name in names}
        | data.texts("weekday_extras")
    )
