"""What one text says in each slot, after normalisation (the unit of memoisation)."""

from __future__ import annotations

from dataclasses import dataclass, field

Quantity = tuple[str, str]  # (number, unit): ("5", "kg")
Direction = tuple[str, str]  # (from, to): ("london", "tokyo")


@dataclass(frozen=True, slots=True)
class TextSlots:
    language: str
    numbers: frozenset[str] = frozenset()  # "15", "3.11", "#1" (ordinal), "#last"
    quantities: frozenset[Quantity] = frozenset()
    units: frozenset[str] = frozenset()  # canonical units, see units.DIMENSION
    ids: frozenset[str] = frozenset()
    dates: frozenset[str] = frozenset()  # "y2024-m7-d4", "m4", "monday", "christmas"
    time_words: frozenset[str] = frozenset()  # "today", "next week"
    negations: int = 0
    polarity: frozenset[tuple[str, str]] = frozenset()  # (axis, pole)
    entities: frozenset[str] = frozenset()  # canonical names this text mentions
    mentions: frozenset[str] = frozenset()  # every token/name another text's entity may match
    surface: str = ""  # normalised text (Chinese: names are looked up as substrings)
    tiers: frozenset[str] = frozenset()
    directions: frozenset[Direction] = frozenset()
    # Grammatical persons of personal and possessive pronouns ("1", "2", "3"; English:
    # possessive and object forms only) and the person of the request's first subject
    # pronoun ("1" for I/we, "2" for you, "" for none), see `persons.py`.
    persons: frozenset[str] = frozenset()
    subject: str = ""
    # The text's words (Chinese: characters) without punctuation, and the content words
    # no other slot took, for the near-miss alignment in `terms.py`.
    tokens: tuple[str, ...] = ()
    content: tuple[str, ...] = ()


@dataclass(slots=True)
class SlotBuilder:
    """Mutable collector used while one text is being read."""

    numbers: set[str] = field(default_factory=set)
    quantities: set[Quantity] = field(default_factory=set)
    units: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)
    dates: set[str] = field(default_factory=set)
    time_words: set[str] = field(default_factory=set)
    negations: int = 0
    polarity: set[tuple[str, str]] = field(default_factory=set)
    entities: set[str] = field(default_factory=set)
    mentions: set[str] = field(default_factory=set)
    tiers: set[str] = field(default_factory=set)
    directions: set[Direction] = field(default_factory=set)
    persons: set[str] = field(default_factory=set)
    subject: str = ""
    tokens: tuple[str, ...] = ()
    content: tuple[str, ...] = ()

    def quantity(self, number: str, unit: str | None) -> None:
        self.numbers.add(number)
        if unit:
            self.units.add(unit)
            self.quantities.add((number, unit))

    def freeze(self, language: str, surface: str) -> TextSlots:
        return TextSlots(
            language=language,
            numbers=frozenset(self.numbers),
            quantities=frozenset(self.quantities),
            units=frozenset(self.units),
            ids=frozenset(self.ids),
            dates=frozenset(self.dates),
            time_words=frozenset(self.time_words),
            negations=self.negations,
            polarity=frozenset(self.polarity),
            entities=frozenset(self.entities),
            mentions=frozenset(self.mentions | self.entities),
            surface=surface,
            tiers=frozenset(self.tiers),
            directions=frozenset(self.directions),
            persons=frozenset(self.persons),
            subject=self.subject,
            tokens=self.tokens,
            content=self.content,
        )
