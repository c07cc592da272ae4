"""What separates two asks, and whether it carries meaning.

Embedders judge what two texts share: "Is Python only for scripting?" and "...also for
scripting?" embed at cosine 0.99, and so do `x++` / `++x` and "Celsius to Fahrenheit" /
"Fahrenheit to Celsius". So the semantic cache decides on the difference instead: the
two asks are aligned token by token (`tokens.py`; difflib's longest-matching-block
alignment) and every differing span is classified:

- bearing (refuse): a quoted or code span, a number, an operator or sign, or a word of
  a meaning-bearing class of the lexicon (quantifiers, conjunctions, prepositions,
  negation, comparatives, persons, modals, tense and time words, question words,
  number words); a swap of two words around a pivot that is not symmetric ("A to B" /
  "B to A", "A 比 B" / "B 比 A"); a word that moves across an operator or number; a
  substituted word the other ask names elsewhere or the shared material names (the
  question's focus: "A does X and B does Y. What does B do?").
- preserving: articles, politeness and filler, auxiliaries, question templates,
  punctuation, inflections, synonyms of the lexicon, and words that only moved (around
  a symmetric pivot such as "and" / 和, or as a block: "What is the tallest mountain"
  / "Which mountain is the tallest").
- content: a content word added or substituted that the lexicon does not know. The
  embedding settles these (the caller's threshold).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from gateway.bounded_lru import BoundedLRU
from gateway.difference.lexicon import LanguageLexicon, Lexicon
from gateway.difference.order import BEARING_ORDER, order_change
from gateway.difference.tokens import Token, tokenize
from gateway.difference.words import stem, unquote, with_neighbours

MAX_TOKENS = 120  # longer asks are not analysed: they are left to the embedding
# Bearing at any size of difference: a quoted or code span, a number, an operator, a
# role swap, the question's focus moved to another thing the turn names.
HARD = frozenset({"verbatim", "number", "operator", "reorder_operator", "role_swap", "focus"})


@dataclass(frozen=True, slots=True)
class Difference:
    """The classes of what differs: `bearing` refuses; with none, `content` says
    whether the embedding must settle a substituted or added content word."""

    bearing: tuple[str, ...]
    preserving: tuple[str, ...]
    content: tuple[str, ...]  # the content words (keys) added or substituted
    analysed: bool = True  # False: too long, not analysed
    # Tokens (punctuation aside) in the differing spans of the side with more of them,
    # words that only moved left out; and the longer ask's length in tokens.
    changed_tokens: int = 0
    length_tokens: int = 0
    # Bearing classes where a word was put for another word of the same class
    substituted: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        return self.analysed and not (self.bearing or self.preserving or self.content)

    @property
    def only_preserving(self) -> bool:
        return self.analysed and not self.bearing and not self.content

    @property
    def reordered(self) -> bool:
        """Words moved in a way the analysis cannot vouch for (the structure guard
        decides)."""
        return "reorder" in self.preserving

    def refusal(self, near_identical_tokens: int, short_ask_tokens: int) -> tuple[str, ...]:
        """The bearing classes that refuse. The hard ones (`HARD`) and a word put for
        another of its class ("only" / "also", "to" / "from") always. The other bearing
        words (one added or dropped: a preposition, pronoun, modal, time word...) in an
        ask of at most `short_ask_tokens` tokens, when the asks are otherwise identical:
        at most `near_identical_tokens` telling tokens changed, or nothing but such
        words changed and nothing moved. In a wider rewording, or a long sentence, such
        a word moves with the words around it and the embedding settles it (on the dev
        sets a soft class changes in 1,740 of LCQMC's 4,024 duplicate pairs and 2,473 of
        QQP's 2,950; PAWS-Wiki's long sentences add "over" or drop "our" in duplicates).
        """
        hard = tuple(kind for kind in self.bearing if kind in HARD or kind in self.substituted)
        if hard or self.length_tokens > short_ask_tokens:
            return hard
        restructured = self.content or any(kind in _REORDERS for kind in self.preserving)
        if self.changed_tokens > near_identical_tokens and restructured:
            return ()
        return self.bearing

    def code(self) -> str:
        """A short code of what differed, for the hit header (`reorder`, `synonym`,
        `template`...): the preserving classes, sorted, joined with `+`."""
        if self.identical:
            return "none"
        return "+".join(sorted(set(self.preserving))) or "content"


NOT_ANALYSED = Difference((), (), (), analysed=False)


class DifferenceAnalyser:
    """Compares asks; memoises verdicts per pair (stored asks meet many queries)."""

    def __init__(self, lexicon: Lexicon | None = None, memo_size: int = 8192) -> None:
        self._lexicon = lexicon if lexicon is not None else Lexicon.packaged()
        self._memo: BoundedLRU[tuple[str, str, str], Difference] = BoundedLRU(memo_size)
        self._tokens: BoundedLRU[str, tuple[Token, ...]] = BoundedLRU(memo_size)

    def tokens(self, text: str) -> tuple[Token, ...]:
        found = self._tokens.get(text)
        if found is None:
            found = tokenize(text, self._lexicon)
            self._tokens.put(text, found)
        return found

    def compare(self, query: str, candidate: str, context: str = "") -> Difference:
        """What separates `query` from `candidate`; `context` is material both share
        (a word it names is a possible focus of the question)."""
        pair = (query, candidate, context)
        found = self._memo.get(pair)
        if found is None:
            found = self._compare(query, candidate, context)
            self._memo.put(pair, found)
        return found

    def _compare(self, query: str, candidate: str, context: str) -> Difference:
        left, right = self.tokens(query), self.tokens(candidate)
        if len(left) > MAX_TOKENS or len(right) > MAX_TOKENS:
            return NOT_ANALYSED
        matcher = SequenceMatcher(
            None, [t.key for t in left], [t.key for t in right], autojunk=False
        )
        spans = [
            _Span(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
        ]
        if not spans:
            return Difference((), (), ())
        found = _Found()
        moved = _moved(left, right, spans)
        if moved:
            if _keys(self._telling(left)) == _keys(self._telling(right)):
                # Only templates, question words, filler or punctuation moved
                # (什么是X / X是什么): every word that carries the request kept its order.
                found.preserving.append("template")
            else:
                # With the question words: "谁喜欢X" / "X喜欢谁" swaps who does what.
                order = order_change(
                    self._telling(left, questions=True), self._telling(right, questions=True)
                )
                (found.bearing if order in BEARING_ORDER else found.preserving).append(order)
        shared = _seen(self.tokens(context)) if context else _NOTHING
        for span in spans:
            self._classify(left, right, span, moved, shared, found)
        changed = max(
            sum(1 for span in spans for t in left[span.i1 : span.i2] if self._tells(t, moved)),
            sum(1 for span in spans for t in right[span.j1 : span.j2] if self._tells(t, moved)),
        )
        return Difference(
            tuple(dict.fromkeys(found.bearing)),
            tuple(dict.fromkeys(found.preserving)),
            tuple(found.content),
            changed_tokens=changed,
            length_tokens=max(len(left), len(right)),
            substituted=tuple(dict.fromkeys(found.substituted)),
        )

    def _classify(
        self,
        left: Sequence[Token],
        right: Sequence[Token],
        span: _Span,
        moved: frozenset[str],
        context: _Seen,
        found: _Found,
    ) -> None:
        """Sorts the tokens of one differing span into `found`."""
        side_l = [t for t in left[span.i1 : span.i2] if t.key not in moved]
        side_r = [t for t in right[span.j1 : span.j2] if t.key not in moved]
        side_l, side_r = unquote(side_l, side_r, found.preserving)
        # Synonyms of the lexicon pair off first, whatever their class ("I" / "you").
        side_l, side_r = self._pair_off(side_l, side_r, found.preserving, synonyms_only=True)
        unknown_l: list[Token] = []
        unknown_r: list[Token] = []
        classes: tuple[set[str], set[str]] = (set(), set())
        for tokens, unknown, seen in (
            (side_l, unknown_l, classes[0]),
            (side_r, unknown_r, classes[1]),
        ):
            for token in tokens:
                kind = self._kind_of(token)
                if kind is None:
                    unknown.append(token)
                elif kind[1] == "bearing":
                    found.bearing.append(kind[0])
                    seen.add(kind[0])
                else:
                    found.preserving.append(kind[0])
        # One word of a class put for another of the same class: "only" / "also",
        # "and" / "or", "to" / "from", 所有 / 一些, `>` / `>>`. Refused at any size.
        found.substituted.extend(classes[0] & classes[1])
        unknown_l, unknown_r = self._pair_off(unknown_l, unknown_r, found.preserving)
        # The question's focus moves when one thing is put for another the turn names;
        # a word only added or dropped is left to the embedding ("刘翔" / "刘翔刘翔").
        substituted = bool(side_l) and bool(side_r)
        # Each ask as the other side reads it: without the span this one stands for, so a
        # neighbour character shared by the aligned words (改 / 更改 + 还) names nothing.
        for unknown, other, own, start in (
            (unknown_l, _seen(right, span.j1, span.j2), left, span.i1),
            (unknown_r, _seen(left, span.i1, span.i2), right, span.j1),
        ):
            if substituted and _names_another(unknown, other, context, own, start):
                found.bearing.append("focus")
                found.content.extend(t.key for t in unknown if t.kind != "word")
            else:
                found.content.extend(t.key for t in unknown)

    def _tells(self, token: Token, moved: frozenset[str]) -> bool:
        """A changed token that counts towards the size of a difference: not one that
        only moved, not punctuation, filler, articles or templates."""
        if token.key in moved:
            return False
        kind = self._kind_of(token)
        return kind is None or kind[1] == "bearing"

    def _telling(
        self, tokens: Sequence[Token], *, questions: bool = False
    ) -> list[tuple[int, Token]]:
        """The words that carry the request, in order: all but preserving ones; question
        words and templates only with `questions` (they may stand first or last)."""
        telling = []
        for index, token in enumerate(tokens):
            kind = self._kind_of(token)
            asks = token.kind == "canon" or (kind is not None and kind[0] == "question")
            if asks:
                if questions and token.key not in _NOT_QUESTIONS:
                    telling.append((index, token))
                continue
            if kind is None or kind[1] == "bearing":
                telling.append((index, token))
        return telling

    def _pair_off(
        self,
        left: list[Token],
        right: list[Token],
        preserving: list[str],
        *,
        synonyms_only: bool = False,
    ) -> tuple[list[Token], list[Token]]:
        """Removes pairs of the same word (an inflection) or of the lexicon's synonyms,
        one from each side; with `synonyms_only`, synonyms only."""
        rest_r = list(right)
        rest_l: list[Token] = []
        for token in left:
            if synonyms_only:
                lexicon = self._language(token)
                match = next((r for r in rest_r if lexicon.synonyms(token.key, r.key)), None)
            else:
                match = next((r for r in rest_r if self._same_word(token, r)), None)
            if match is None:
                rest_l.append(token)
                continue
            rest_r.remove(match)
            preserving.append("inflection" if stem(token.key) == stem(match.key) else "synonym")
        return rest_l, rest_r

    def _same_word(self, left: Token, right: Token) -> bool:
        if left.kind != right.kind or left.kind not in ("word", "cjk"):
            return False
        lexicon = self._language(left)
        return stem(left.key) == stem(right.key) or lexicon.synonyms(left.key, right.key)

    def _language(self, token: Token) -> LanguageLexicon:
        return self._lexicon.en if token.key.isascii() else self._lexicon.zh

    def _kind_of(self, token: Token) -> tuple[str, str] | None:
        """(class, meaning) of a token, None for an unknown content word."""
        if token.kind == "verbatim":
            return "verbatim", "bearing"
        if token.kind == "number":
            return "number", "bearing"
        if token.kind == "operator":
            return "operator", "bearing"
        if token.kind == "punct":
            return "punctuation", "preserving"
        found = self._language(token).meaning_of(token.key)
        if found is None and token.kind == "canon":
            return "template", "preserving"
        return found


# A text as the words it names and its Chinese characters run together.
_Seen = tuple[frozenset[str], str]
_NOTHING: _Seen = (frozenset(), "")


def _names_another(
    unknown: Sequence[Token], other: _Seen, context: _Seen, own: Sequence[Token], start: int
) -> bool:
    """Whether the content put in this span names something the other ask (outside
    its own aligned span) or the shared material names: a word, or in Chinese the
    changed characters with a neighbour (小王 / 小丽; one character alone recurs in
    unrelated words)."""
    if any(t.kind == "word" and (t.key in other[0] or t.key in context[0]) for t in unknown):
        return True
    run = "".join(t.key for t in unknown if t.kind == "cjk")
    if not run or len(run) != sum(1 for t in unknown if t.kind == "cjk"):
        return False
    return any(
        candidate in other[1] or candidate in context[1]
        for candidate in with_neighbours(run, own, start, len(unknown))
    )


def _seen(tokens: Sequence[Token], cut_start: int = 0, cut_end: int = 0) -> _Seen:
    """The words `tokens` name, and their Chinese characters run together, with a
    separator where tokens[cut_start:cut_end] stood."""
    kept = [*tokens[:cut_start], Token("|", "punct"), *tokens[cut_end:]]
    return (
        frozenset(t.key for t in tokens if t.kind == "word"),
        "".join(t.key if t.kind == "cjk" else "|" for t in kept),
    )


@dataclass(frozen=True, slots=True)
class _Span:
    """A differing span: left[i1:i2] stands where right[j1:j2] does."""

    i1: int
    i2: int
    j1: int
    j2: int


@dataclass(slots=True)
class _Found:
    bearing: list[str] = field(default_factory=list)
    preserving: list[str] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    substituted: list[str] = field(default_factory=list)


def _moved(left: Sequence[Token], right: Sequence[Token], spans: Sequence[_Span]) -> frozenset[str]:
    """Keys that one ask has in a differing span and the other in another differing
    span: the same word at another place."""
    keys_l = Counter(t.key for span in spans for t in left[span.i1 : span.i2])
    keys_r = Counter(t.key for span in spans for t in right[span.j1 : span.j2])
    return frozenset(key for key in keys_l if key in keys_r)


def _keys(telling: Sequence[tuple[int, Token]]) -> list[str]:
    return [token.key for _, token in telling]


# Canonical tokens that are not questions: politeness and "explain" templates.
_NOT_QUESTIONS = frozenset({"<ask>", "<explain>"})
_REORDERS = frozenset({"reorder", "reorder_block", "reorder_symmetric"})
