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
from gateway.difference.tokens import Token, tokenize

# Question words of both languages: in a pivot they belong to the question.
_ASKING = frozenset(
    {
        "what",
        "which",
        "who",
        "how",
        "why",
        "where",
        "when",
        "谁",
        "哪",
        "哪个",
        "哪些",
        "几",
        "多少",
    }
)
# Pivots that keep both roles when the words around them swap ("A and B", "A 和 B").
_SYMMETRIC = frozenset(
    {"and", "or", "vs", "versus", ",", "、", "和", "与", "跟", "及", "以及", "同", "还是", "或"}
)
# Preserving classes whose words may move freely (question words of a template).
# Inflectional and derivational endings: "summary" / "summarize", "differ" /
# "difference" / "different", "painter" / "painted" share a stem. A prefix that
# reverses a word (un-, de-, dis-) is never stripped: "opened" / "unopened" differ.
_EN_SUFFIXES = (
    "ations", "ation", "izing", "ising", "izes", "ises", "ized", "ised", "ize", "ise",
    "ments", "ment", "ences", "ence", "ents", "ent", "ances", "ance", "ers", "er", "ors",
    "or", "ings", "ing", "ied", "ies", "ed", "es", "ly", "s", "y", "e",
)  # fmt: skip
_MIN_STEM_CHARS = 4
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
                order = _order_change(
                    self._telling(left, questions=True), self._telling(right, questions=True)
                )
                (found.bearing if order in _BEARING_ORDER else found.preserving).append(order)
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
        side_l, side_r = _unquote(side_l, side_r, found.preserving)
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
        whole_l, whole_r = _seen(left), _seen(right)
        # The question's focus moves when one thing is put for another the turn names;
        # a word only added or dropped is left to the embedding ("刘翔" / "刘翔刘翔").
        substituted = bool(side_l) and bool(side_r)
        for unknown, other, own, start in (
            (unknown_l, whole_r, left, span.i1),
            (unknown_r, whole_l, right, span.j1),
        ):
            focus = False
            for token in unknown:
                named = token.key in other[0] or token.key in context[0]
                if substituted and token.kind == "word" and named:
                    focus = True
                else:
                    found.content.append(token.key)
            # Chinese: the changed characters with a neighbour (小王 / 小丽) named
            # elsewhere by the other ask or the material (one character alone recurs in
            # unrelated words).
            run = "".join(t.key for t in unknown if t.kind == "cjk")
            if substituted and run and len(run) == sum(1 for t in unknown if t.kind == "cjk"):
                for candidate in _with_neighbours(run, own, start, len(unknown)):
                    if candidate in other[1] or candidate in context[1]:
                        focus = True
            if focus:
                found.bearing.append("focus")

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
            preserving.append("inflection" if _stem(token.key) == _stem(match.key) else "synonym")
        return rest_l, rest_r

    def _same_word(self, left: Token, right: Token) -> bool:
        if left.kind != right.kind or left.kind not in ("word", "cjk"):
            return False
        lexicon = self._language(left)
        return _stem(left.key) == _stem(right.key) or lexicon.synonyms(left.key, right.key)

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


def _seen(tokens: Sequence[Token]) -> _Seen:
    return (
        frozenset(t.key for t in tokens if t.kind == "word"),
        "".join(t.key for t in tokens if t.kind == "cjk"),
    )


def _stem(word: str) -> str:
    if not word.isascii() or len(word) <= _MIN_STEM_CHARS:
        return word
    for suffix in _EN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM_CHARS:
            return word[: -len(suffix)]
    return word


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


_QUOTE_MARKS = "\"“”「」『』'"


def _unquote(
    side_l: list[Token], side_r: list[Token], preserving: list[str]
) -> tuple[list[Token], list[Token]]:
    """A quoted word on one side and the same word unquoted on the other ("the word
    "cactus"" / "cactus") differ only in the quotation marks: both are dropped."""
    for quoted_side, plain_side in ((side_l, side_r), (side_r, side_l)):
        for token in [t for t in quoted_side if t.kind == "verbatim" and t.key[:1] in _QUOTE_MARKS]:
            inner = token.key[1:-1].strip().lower()
            words = [t for t in plain_side if t.kind in ("word", "cjk", "number")]
            for start in range(len(words)):
                for end in range(start + 1, len(words) + 1):
                    joined = " ".join(t.key for t in words[start:end])
                    if joined == inner or joined.replace(" ", "") == inner.replace(" ", ""):
                        quoted_side.remove(token)
                        for matched in words[start:end]:
                            plain_side.remove(matched)
                        preserving.append("quotes")
                        break
                else:
                    continue
                break
    return side_l, side_r


def _with_neighbours(run: str, own: Sequence[Token], start: int, size: int) -> list[str]:
    """`run` with the Chinese character before it and the one after it, where those
    are characters: the smallest unit that names something."""
    found = []
    if len(run) >= 2:
        found.append(run)
    if start > 0 and own[start - 1].kind == "cjk":
        found.append(own[start - 1].key + run)
    end = start + size
    if end < len(own) and own[end].kind == "cjk":
        found.append(run + own[end].key)
    return found


def _moved(left: Sequence[Token], right: Sequence[Token], spans: Sequence[_Span]) -> frozenset[str]:
    """Keys that one ask has in a differing span and the other in another differing
    span: the same word at another place."""
    keys_l = Counter(t.key for span in spans for t in left[span.i1 : span.i2])
    keys_r = Counter(t.key for span in spans for t in right[span.j1 : span.j2])
    return frozenset(key for key in keys_l if key in keys_r)


def _order_change(
    telling_l: Sequence[tuple[int, Token]], telling_r: Sequence[tuple[int, Token]]
) -> str:
    """How the order of the telling words (`_telling`) changed between two asks:

    - `template`: it did not (only templates, question words or filler moved);
    - `reorder_block`: two adjacent blocks traded places, X Y -> Y X ("install Python
      on Windows" / "on Windows, install Python", 百度贴吧怎么设置头像 / 怎么设置百度贴吧头像);
      in English the two must touch in one of the asks ("the tallest mountain" /
      "mountain ... the tallest"): "every integer a rational number" / "every
      rational number an integer" swaps subject and predicate around the article;
    - `reorder_symmetric`: X M Y -> Y M X around a symmetric pivot ("A and B", 和);
    - `role_swap` (bearing): X M Y -> Y M X around any other pivot ("Celsius to
      Fahrenheit", "Alice owes Bob", 北京比上海);
    - `reorder_operator` (bearing): a transposed block holds an operator, a number or a
      quoted span (`x++` / `++x`);
    - `reorder`: anything else; the caller has the structure guard confirm it."""
    keys_l, keys_r = [t.key for _, t in telling_l], [t.key for _, t in telling_r]
    start = 0
    while start < min(len(keys_l), len(keys_r)) and keys_l[start] == keys_r[start]:
        start += 1
    end = 0
    while (
        end < min(len(keys_l), len(keys_r)) - start
        and keys_l[len(keys_l) - 1 - end] == keys_r[len(keys_r) - 1 - end]
    ):
        end += 1
    # A shared edge may belong to a transposed block (战争雷霆 / 战机世界 share 战,
    # "X好还是Y好" ends both alternatives in 好): the lenient reading of a few shorter
    # edges wins over a role swap.
    found = [
        _transposition(telling_l, telling_r, shared_start, shared_end)
        for shared_start in range(start, max(start - _EDGE_SLACK, 0) - 1, -1)
        for shared_end in range(end, max(end - _EDGE_SLACK, 0) - 1, -1)
    ]
    for outcome in ("reorder_block", "reorder_symmetric", "reorder_operator", "role_swap"):
        if outcome in found:
            return outcome
    return "reorder"


_EDGE_SLACK = 2


def _transposition(
    telling_l: Sequence[tuple[int, Token]],
    telling_r: Sequence[tuple[int, Token]],
    start: int,
    end: int,
) -> str | None:
    """X M Y -> Y M X between the first `start` and the last `end` telling tokens."""
    left = [token for _, token in telling_l]
    keys_l, keys_r = [t.key for t in left], [t.key for _, t in telling_r]
    middle_l = left[start : len(left) - end]
    core_l, core_r = keys_l[start : len(keys_l) - end], keys_r[start : len(keys_r) - end]
    if sorted(core_l) != sorted(core_r) or len(core_l) > _MAX_ORDER_TOKENS:
        return None
    size = len(core_l)
    for x in range(1, size):
        for y in range(1, size - x + 1):
            pivot = core_l[x : size - y]
            if core_r != core_l[size - y :] + pivot + core_l[:x]:
                continue
            blocks = [*middle_l[:x], *middle_l[size - y :]]
            if any(t.kind == "operator" for t in blocks):
                return "reorder_operator"
            # Question words and templates in the pivot belong to the question, not to
            # either role ("罗汉鱼能和鹦鹉鱼一起养吗": 能 is "can").
            roles = [
                t.key for t in middle_l[x : size - y] if t.kind != "canon" and t.key not in _ASKING
            ]
            if not pivot:
                if not _touching(telling_l, telling_r, start, size, x, y):
                    return "reorder"
                return "reorder_block"
            # Nothing but question words between them ("10 公里是多少英里" / "10 英里是
            # 多少公里") is no evidence of symmetry.
            if roles and all(key in _SYMMETRIC for key in roles):
                return "reorder_symmetric"
            return "role_swap"
    return None


def _touching(
    telling_l: Sequence[tuple[int, Token]],
    telling_r: Sequence[tuple[int, Token]],
    start: int,
    size: int,
    x: int,
    y: int,
) -> bool:
    """Whether the two transposed blocks stand next to each other, with no token at all
    between them, in either ask (left: X then Y; right: Y then X)."""
    x_end_l = telling_l[start + x - 1][0]
    y_start_l = telling_l[start + x][0]
    y_end_r = telling_r[start + y - 1][0]
    x_start_r = telling_r[start + y][0]
    return y_start_l == x_end_l + 1 or x_start_r == y_end_r + 1


def _keys(telling: Sequence[tuple[int, Token]]) -> list[str]:
    return [token.key for _, token in telling]


# Canonical tokens that are not questions: politeness and "explain" templates.
_NOT_QUESTIONS = frozenset({"<ask>", "<explain>"})
_REORDERS = frozenset({"reorder", "reorder_block", "reorder_symmetric"})
_BEARING_ORDER = frozenset({"role_swap", "reorder_operator"})
_MAX_ORDER_TOKENS = 60
