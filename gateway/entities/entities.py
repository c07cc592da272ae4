"""May the answer stored for one request serve another? The slot-by-slot check.

Embedders score "How many calories are in 2 eggs?" and "...in 3 eggs?" as high as real
paraphrases, so every semantic candidate is compared slot by slot before it is served:
numbers and amounts, IDs and codes, dates, relative time words, negation, antonym
polarity, named entities, product tiers, direction ("from X to Y"), units, grammatical
person ("my website" vs "your website") and, for otherwise near-identical texts, a
substituted or narrowing content term ("time" vs "space complexity"). Any
disagreement rejects the candidate: a miss costs one upstream call, a false hit serves
a wrong answer.

Each text is read once (rules over a memoised spaCy parse for English, lexicons and
rules for Chinese) and its slots are memoised, because stored candidates are compared
against many queries. Comparing two readings is a few set operations, plus one short
alignment for the term check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from gateway.bounded_lru import BoundedLRU
from gateway.difference.analysis import Difference, DifferenceAnalyser
from gateway.entities.extract_en import EnglishExtractor
from gateway.entities.extract_zh import ChineseExtractor
from gateway.entities.persons import compare_persons
from gateway.entities.questions import compare_questions
from gateway.entities.quotes import quoted_words
from gateway.entities.slots import TextSlots
from gateway.entities.terms import compare_terms, term_changes
from gateway.entities.text import cap, joined
from gateway.entities.units import Units
from gateway.nlp import TextAnalyzer, detect_language


@dataclass(frozen=True, slots=True)
class Mismatch:
    # "number" | "id" | "date" | "time_word" | "negation" | "polarity" | "named_entity"
    # | "tier" | "direction" | "unit" | "person" | "question" | "term" | "language"
    # | "quoted"
    kind: str
    query_value: str  # short (<= 40 characters): mismatches may be logged
    candidate_value: str


@dataclass(frozen=True, slots=True)
class EntityVerdict:
    mismatches: tuple[Mismatch, ...]

    @property
    def agree(self) -> bool:
        return not self.mismatches


class EntityComparator:
    """Compares the slots of a query and a stored candidate.

    `memo_size` bounds the per-text memo of extracted slots (stored candidates are
    compared many times; queries usually once) and the per-pair memo of verdicts: a
    question asked again in the same words meets the same candidate again, and both
    comparisons are pure functions of the two texts (~0.1-0.3 ms of rules each time).
    """

    def __init__(self, analyzer: TextAnalyzer, memo_size: int = 8192) -> None:
        self._analyzer = analyzer
        self._english = EnglishExtractor()
        self._chinese = ChineseExtractor()
        self._slots: Callable[[str], TextSlots] = lru_cache(maxsize=memo_size)(self._read)
        self._verdicts: BoundedLRU[tuple[str, str], EntityVerdict] = BoundedLRU(memo_size)
        self._changes: BoundedLRU[tuple[str, str], tuple[str, ...]] = BoundedLRU(memo_size)
        self._difference = DifferenceAnalyser(memo_size=memo_size)

    def difference(self, query: str, candidate: str, context: str = "") -> Difference:
        """What separates the two asks, span by span (`gateway/difference/`); `context`
        is the material both requests carry."""
        return self._difference.compare(query, candidate, context)

    def compare(self, query: str, candidate: str) -> EntityVerdict:
        pair = (query, candidate)
        verdict = self._verdicts.get(pair)
        if verdict is None:
            slots = compare_slots(self.slots(query), self.slots(candidate))
            verdict = EntityVerdict(mismatches=slots)
            self._verdicts.put(pair, verdict)
        return verdict

    def content_changes(self, query: str, candidate: str) -> tuple[str, ...]:
        """Kinds of every content-word difference between two near-identical texts,
        decisive or not ("add", "replace", "antonym"). `compare` rejects only on the
        decisive ones; in the review band, where the embedder is less sure, any added or
        substituted content word is reason enough to refuse."""
        pair = (query, candidate)
        kinds = self._changes.get(pair)
        if kinds is None:
            changes = term_changes(self.slots(query), self.slots(candidate))
            kinds = tuple(kind for kind, _, _ in changes)
            self._changes.put(pair, kinds)
        return kinds

    def slots(self, text: str) -> TextSlots:
        """What `text` says in each slot (memoised)."""
        return self._slots(text)

    def _read(self, text: str) -> TextSlots:
        if detect_language(text) == "zh":
            return self._chinese.extract(text)
        return self._english.extract(text, self._analyzer.doc(text))


def compare_slots(query: TextSlots, candidate: TextSlots) -> tuple[Mismatch, ...]:
    found: list[Mismatch] = []
    for kind, rule in _RULES:
        difference = rule(query, candidate)
        if difference is not None:
            found.append(Mismatch(kind, cap(difference[0]), cap(difference[1])))
    return tuple(found)


SlotDifference = tuple[str, str] | None


def _sets(left: frozenset[str], right: frozenset[str]) -> SlotDifference:
    if left == right:
        return None
    return joined(left - right), joined(right - left)


def _language(q: TextSlots, c: TextSlots) -> SlotDifference:
    # An English answer does not serve a Chinese question, however close the vectors.
    return None if q.language == c.language else (q.language, c.language)


def _numbers(q: TextSlots, c: TextSlots) -> SlotDifference:
    # "one cup" and "a cup" say the same: a bare 1 is too weak to tell texts apart
    # ("一个月", "one of the"), while 2 vs 1 still differs through the 2.
    q_numbers = q.numbers - {"1"} - _years_as_numbers(c)
    c_numbers = c.numbers - {"1"} - _years_as_numbers(q)
    return _sets(q_numbers, c_numbers)


def _ids(q: TextSlots, c: TextSlots) -> SlotDifference:
    return _sets(q.ids, c.ids)


def _dates(q: TextSlots, c: TextSlots) -> SlotDifference:
    return _sets(q.dates - _numbers_as_years(c), c.dates - _numbers_as_years(q))


# "the 2000 note" reads 2000 as a year, "the 2000 rupee note" as an amount: one value.
def _years_as_numbers(slots: TextSlots) -> set[str]:
    return {d[1:] for d in slots.dates if d[:1] == "y" and d[1:].isdigit()}


def _numbers_as_years(slots: TextSlots) -> set[str]:
    return {"y" + n for n in slots.numbers if n.isdigit()}


def _time_words(q: TextSlots, c: TextSlots) -> SlotDifference:
    return _sets(q.time_words, c.time_words)


def _negation(q: TextSlots, c: TextSlots) -> SlotDifference:
    # Parity, not count: "why won't it start" and "why does it not start" agree.
    if q.negations % 2 == c.negations % 2:
        return None
    return str(q.negations), str(c.negations)


def _polarity(q: TextSlots, c: TextSlots) -> SlotDifference:
    # Only axes both texts use, and only a flip: a paraphrase may drop "best" or add a
    # second pole ("男朋友叫我邻家女孩"), but "turn on" vs "turn off" shares no pole.
    # In English, a question that names both poles ("pros and cons", "best and worst")
    # is not served an answer that covered one: that answer is incomplete. The reverse
    # (an answer covering both, for a question about one) is served.
    axes = {axis for axis, _ in q.polarity} & {axis for axis, _ in c.polarity}
    for axis in sorted(axes):
        q_poles = {pole for a, pole in q.polarity if a == axis}
        c_poles = {pole for a, pole in c.polarity if a == axis}
        if not (q_poles <= c_poles or c_poles <= q_poles) or (
            q.language == "en" and q_poles > c_poles
        ):
            return f"{axis}:{'+'.join(sorted(q_poles))}", f"{axis}:{'+'.join(sorted(c_poles))}"
    return None


def _named_entities(q: TextSlots, c: TextSlots) -> SlotDifference:
    # A name counts as present when the other text mentions it anywhere, recognised as
    # a name or not: spaCy and capitalisation are inconsistent across paraphrases.
    q_only = {e for e in q.entities if not _mentions(c, e)}
    c_only = {e for e in c.entities if not _mentions(q, e)}
    if not q_only and not c_only:
        return None
    return joined(q_only), joined(c_only)


def _mentions(slots: TextSlots, name: str) -> bool:
    if name in slots.mentions:
        return True
    if slots.language == "zh" and name in slots.surface:
        return True
    return all(_has_token(slots.mentions, token) for token in name.split())


# Endings that derive one name from another: Hindu/Hinduism, Korea/Korean, dict/dicts.
_DERIVED = frozenset(
    {"s", "es", "ism", "ist", "ists", "ian", "ians", "an", "ans", "n", "ese", "ish", "ic", "able"}
)


def _has_token(mentions: frozenset[str], token: str) -> bool:
    if token in mentions:
        return True
    for mention in mentions:
        shorter, longer = sorted((token, mention), key=len)
        ending = longer[len(shorter) :]
        if longer.startswith(shorter) and (
            ending in ("s", "es") or (len(shorter) >= 4 and ending in _DERIVED)
        ):
            return True
    return False


def _tiers(q: TextSlots, c: TextSlots) -> SlotDifference:
    return _sets(q.tiers, c.tiers)


def _direction(q: TextSlots, c: TextSlots) -> SlotDifference:
    # Only a reversal counts ("X to Y" vs "Y to X"): one text naming a direction the
    # other leaves implicit is usually a paraphrase ("100 USD to EUR" / "100 USD in EUR").
    same = _same_chinese_endpoint if "zh" in (q.language, c.language) else _same_endpoint
    for q_from, q_to in q.directions:
        for c_from, c_to in c.directions:
            reversed_ = same(q_from, c_to) and same(q_to, c_from)
            if reversed_ and not (same(q_from, c_from) and same(q_to, c_to)):
                return f"{q_from}>{q_to}", f"{c_from}>{c_to}"
    return None


def _same_endpoint(left: str, right: str) -> bool:
    return bool(set(left.split()) & set(right.split()))


def _same_chinese_endpoint(left: str, right: str) -> bool:
    # Fallback endpoints are a few characters cut at a guess: "电脑" and "电脑上" are one.
    shorter, longer = sorted((left, right), key=len)
    return longer.startswith(shorter) or (len(shorter) >= 2 and shorter in longer)


def _units(q: TextSlots, c: TextSlots) -> SlotDifference:
    dimension_of = Units.packaged().DIMENSION
    # Per dimension, when both texts name one: km vs mile, °C vs °F, per month vs per year.
    for dimension in sorted(
        {dimension_of[u] for u in q.units} & {dimension_of[u] for u in c.units}
    ):
        q_units = {u for u in q.units if dimension_of[u] == dimension}
        c_units = {u for u in c.units if dimension_of[u] == dimension}
        if q_units != c_units:
            return joined(q_units), joined(c_units)
    # The same number with another unit: "5公斤等于多少磅" vs "5磅等于多少公斤".
    for number, unit in q.quantities:
        for other_number, other_unit in c.quantities:
            if (
                number == other_number
                and unit != other_unit
                and dimension_of[unit] == dimension_of[other_unit]
                and (number, other_unit) not in q.quantities
                and (other_number, unit) not in c.quantities
            ):
                return f"{number} {unit}", f"{number} {other_unit}"
    return None


_NEGATING_PREFIXES = ("un", "non-", "non")


def _negated_word(q: TextSlots, c: TextSlots) -> SlotDifference:
    """A word in one text and the same word with a negating prefix in the other
    ("unopened" / "opened", "unused" / "used", "non-refundable" / "refundable"), which
    the antonym lists cannot all hold."""
    q_only, c_only = set(q.tokens) - set(c.tokens), set(c.tokens) - set(q.tokens)
    for word in sorted(q_only):
        stem = _negated_stem(word)
        if stem in c_only:
            return word, stem
    for word in sorted(c_only):
        stem = _negated_stem(word)
        if stem in q_only:
            return stem, word
    return None


def _negated_stem(word: str) -> str | None:
    for prefix in _NEGATING_PREFIXES:
        if word.startswith(prefix) and len(word) - len(prefix) >= 3:
            return word[len(prefix) :]
    return None


def _quoted(q: TextSlots, c: TextSlots) -> SlotDifference:
    q_words, c_words = quoted_words(q.surface), quoted_words(c.surface)
    if q_words and c_words and q_words != c_words:
        return joined(q_words), joined(c_words)
    return None


_RULES: tuple[tuple[str, Callable[[TextSlots, TextSlots], SlotDifference]], ...] = (
    ("language", _language),
    ("number", _numbers),
    ("id", _ids),
    ("date", _dates),
    ("time_word", _time_words),
    ("negation", _negation),
    ("negation", _negated_word),
    ("polarity", _polarity),
    ("named_entity", _named_entities),
    ("tier", _tiers),
    ("direction", _direction),
    ("unit", _units),
    ("person", compare_persons),
    ("question", compare_questions),
    ("term", compare_terms),
    ("quoted", _quoted),
)
