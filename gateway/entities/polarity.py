"""Antonym axes: words that flip a request's meaning while leaving its embedding almost
unchanged ("turn on dark mode" / "turn off dark mode", "上涨" / "下跌").

Each surface form maps to one or more (axis, pole) pairs. Two texts disagree when both
use an axis and their poles differ; a text that does not use an axis at all says
nothing about it (a paraphrase may simply not repeat the word). Synonyms share a pole
("lower" and "reduce", "关闭" and "关掉") so that paraphrases agree.

The axes and word lists are data (`gateway/rules/data/en/polarity.yaml`,
`zh/polarity.yaml`), loaded on first use.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Self

from gateway.entities.packaged import PackagedTables
from gateway.rules.compile import RuleBook, RuleFile

Pole = tuple[str, str]  # (axis, pole)
Axes = Mapping[str, Mapping[str, Iterable[str]]]  # axis -> pole -> surface forms


@dataclass(frozen=True, slots=True)
class Polarity(PackagedTables):
    """The antonym axes and their exceptions, by the names the extractors use."""

    EN_AXES: Axes
    # (pattern, pole): "turn the lights on", "switch it off".
    EN_SPLIT_PHRASALS: tuple[tuple[re.Pattern[str], Pole], ...]
    EN_NOT_POLARITY: tuple[str, ...]
    # (pattern, pole): "over $50" / "under 300 calories", only before a quantity.
    EN_QUANTITY_POSITION: tuple[tuple[re.Pattern[str], Pole], ...]
    ZH_AXES: Axes
    ZH_EVENTS_BEFORE_AFTER: tuple[str, ...]
    ZH_NOT_POLARITY: tuple[str, ...]

    @classmethod
    def load(cls, book: RuleBook) -> Self:
        english, chinese = book.file("en/polarity"), book.file("zh/polarity")
        return cls(
            EN_AXES=_axes(english),
            EN_SPLIT_PHRASALS=(
                (english.pattern("en.polarity.split_on"), ("switch", "on")),
                (english.pattern("en.polarity.split_off"), ("switch", "off")),
            ),
            EN_NOT_POLARITY=english.words("not_polarity"),
            EN_QUANTITY_POSITION=(
                (english.pattern("en.polarity.above"), ("position", "above")),
                (english.pattern("en.polarity.below"), ("position", "below")),
            ),
            ZH_AXES=_axes(chinese),
            ZH_EVENTS_BEFORE_AFTER=chinese.words("events_before_after"),
            ZH_NOT_POLARITY=chinese.words("not_polarity"),
        )


def _axes(rule_file: RuleFile) -> dict[str, Mapping[str, tuple[str, ...]]]:
    return {axis: rule_file.groups(f"axis_{axis}") for axis in rule_file.words("axes")}


def surface_map(axes: Axes) -> dict[str, tuple[Pole, ...]]:
    """Surface form -> every (axis, pole) it stands for (`lose`: level down, and lose)."""
    mapping: dict[str, list[Pole]] = {}
    for axis, poles in axes.items():
        for pole, surfaces in poles.items():
            for surface in surfaces:
                entry = mapping.setdefault(surface, [])
                if (axis, pole) not in entry:
                    entry.append((axis, pole))
    return {surface: tuple(poles) for surface, poles in mapping.items()}
