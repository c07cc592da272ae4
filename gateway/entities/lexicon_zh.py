"""Chinese word lists for the slot extractors: data (`gateway/rules/data/zh/entities.yaml`),
loaded on first use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from gateway.entities.packaged import PackagedTables
from gateway.rules.compile import RuleBook, RuleFile


@dataclass(frozen=True, slots=True)
class ChineseLexicon(PackagedTables):
    """The word lists and tables of `gateway/rules/data/zh/entities.yaml`, by the names
    the extractors use."""

    TIME_WORDS: Mapping[str, str]
    WEEKDAYS: Mapping[str, str]
    HOLIDAYS: Mapping[str, str]
    SEASONS: Mapping[str, str]
    NEGATIONS: tuple[str, ...]
    NOT_NEGATION: tuple[str, ...]
    TIER_PREFIXES: Mapping[str, str]
    TIER_SUFFIXES: tuple[str, ...]
    TIER_WORDS: Mapping[str, str]
    LATIN_TIERS: Mapping[str, str]
    ALIASES: Mapping[str, str]
    COUNTRIES: tuple[str, ...]
    PROVINCES: tuple[str, ...]
    CITIES: tuple[str, ...]
    PLACES: tuple[str, ...]
    COMPANIES: tuple[str, ...]
    PEOPLE: tuple[str, ...]
    REGION_OF: Mapping[str, str]
    ANIMALS: tuple[str, ...]
    LANGUAGES: tuple[str, ...]
    ENTITY_NAMES: frozenset[str]
    NOT_NUMBERS: tuple[str, ...]
    DIRECTION_MARKERS: tuple[str, ...]
    NOT_DIRECTION: tuple[str, ...]
    ENDPOINT_STOPS: str

    @classmethod
    def load(cls, book: RuleBook) -> Self:
        data = book.file("zh/entities")
        calendar = book.file("shared/calendar")
        return cls(
            TIME_WORDS=data.texts("time_words"),
            WEEKDAYS=_weekdays(calendar, data),
            HOLIDAYS=data.texts("holidays"),
            SEASONS=data.texts("seasons"),
            NEGATIONS=data.words("negations"),
            NOT_NEGATION=data.words("not_negation"),
            TIER_PREFIXES=data.texts("tier_prefixes"),
            TIER_SUFFIXES=data.words("tier_suffixes"),
            TIER_WORDS=data.texts("tier_words"),
            LATIN_TIERS=data.texts("latin_tiers"),
            ALIASES=data.texts("aliases"),
            COUNTRIES=data.words("countries"),
            PROVINCES=data.words("provinces"),
            CITIES=data.words("cities"),
            PLACES=data.words("places"),
            COMPANIES=data.words("companies"),
            PEOPLE=data.words("people"),
            REGION_OF=data.texts("region_of"),
            ANIMALS=data.words("animals"),
            LANGUAGES=data.words("languages"),
            ENTITY_NAMES=_entity_names(data),
            NOT_NUMBERS=data.words("not_numbers"),
            DIRECTION_MARKERS=data.words("direction_markers"),
            NOT_DIRECTION=data.words("not_direction"),
            ENDPOINT_STOPS=data.fragment("endpoint_stops"),
        )


def _weekdays(calendar: RuleFile, data: RuleFile) -> dict[str, str]:
    """星期一 ... 星期日 (and 星期天) to the weekday's English name."""
    names = calendar.words("weekdays")
    return dict(zip(data.words("weekday_numerals"), names, strict=True)) | {"天": names[-1]}


def _entity_names(data: RuleFile) -> frozenset[str]:
    """Places, companies, people, languages and everyday nouns: names worth comparing."""
    lists = ("countries", "provinces", "cities", "places", "companies", "people", "languages",
             "animals")  # fmt: skip
    return frozenset(word for name in lists for word in data.words(name))
