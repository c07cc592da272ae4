"""Units and currencies that change what a number means (5 km is not 5 miles).

Each surface form maps to a canonical unit; each canonical unit has a dimension. Two
texts disagree on units when both name units of one dimension and the sets differ
(`km` vs `mile`), or when one number carries different units (`5公斤` vs `5磅`). The
tables are data (`gateway/rules/data/shared/units.yaml`), loaded on first use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from gateway.entities.packaged import PackagedTables
from gateway.rules.compile import RuleBook


@dataclass(frozen=True, slots=True)
class Units(PackagedTables):
    """The word lists and tables of `gateway/rules/data/shared/units.yaml`, by the names
    the extractors use."""

    DIMENSION: Mapping[str, str]
    EN_UNITS: Mapping[str, str]
    EN_CURRENCY_SYMBOLS: Mapping[str, str]
    EN_AFTER_NUMBER_ONLY: frozenset[str]
    ZH_UNITS: Mapping[str, str]
    ZH_AFTER_NUMBER_ONLY: frozenset[str]
    ZH_PERIODS: Mapping[str, str]

    @classmethod
    def load(cls, book: RuleBook) -> Self:
        data = book.file("shared/units")
        return cls(
            DIMENSION=data.texts("dimension"),
            EN_UNITS=data.texts("en_units"),
            EN_CURRENCY_SYMBOLS=data.texts("en_currency_symbols"),
            EN_AFTER_NUMBER_ONLY=frozenset(data.words("en_after_number_only")),
            ZH_UNITS=data.texts("zh_units"),
            ZH_AFTER_NUMBER_ONLY=frozenset(data.words("zh_after_number_only")),
            ZH_PERIODS=data.texts("zh_periods"),
        )
