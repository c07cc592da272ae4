"""Pair features for the local gray-band reviewer.

Everything here is pure Python over two short texts, so a review costs well under a
millisecond and needs no model beyond the fitted weights. The features are chosen for
what reaches the reviewer: pairs the embedder already finds similar (calibrated
similarity in the gray band) that passed the entity/slot comparison. What separates
those is mostly *order* and *role*: "flights from Paris to Rome" vs "from Rome to
Paris", "Smith hired Jones" vs "Jones hired Smith", which a bag of words (and the
embedding) cannot see. Hence several views of word order next to the usual overlap
measures.

Text model: words for alphabetic scripts, single characters for CJK (Chinese has no
spaces, and character overlap is the usual strong baseline there). Every feature is
symmetric in the two texts (the verdict must not depend on which one was cached), and
deterministic.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right, insort
from collections import Counter
from dataclasses import dataclass
from typing import Any

# Inputs are user turns; very long ones are cut so that the worst case stays bounded
# (order features are O(n log n) or bit-parallel, overlap features are linear).
MAX_TOKENS = 256
MAX_CHARS = 2000

FEATURE_NAMES: tuple[str, ...] = (
    "similarity",  # calibrated embedding similarity, as passed by the semantic stage
    "token_jaccard",
    "char2_jaccard",
    "char3_jaccard",
    "length_ratio",  # min/max token count
    "lcs_over_max",  # LCS of token sequences / longer length
    "lcs_over_shared",  # LCS / multiset overlap: order agreement of the shared tokens only
    "content_lcs_over_shared",  # the same over content words only
    "kendall_tau",  # rank agreement of shared (unique) tokens
    "content_kendall_tau",  # same, stop words removed (what moved, not "the"/"of")
    "displacement",  # mean shift of shared tokens' relative position
    "bigram_jaccard",
    "trigram_jaccard",
    "bigram_over_shared",  # bigram overlap given the shared tokens: local order kept?
    "one_side_content",  # content tokens found in only one text (both sides, log1p)
    "one_side_fraction",  # the same as a fraction of all content tokens
    "caps_jaccard",  # capitalised words (names) as sets
    "caps_order",  # order agreement of the shared capitalised words
    "numbers_jaccard",
    "negation_diff",  # |negations in a - negations in b|
)

_CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# One CJK (or kana) character, or a run of other letters/digits with inner apostrophes.
_TOKEN = re.compile(rf"[{_CJK_RANGES}]|[^\W_{_CJK_RANGES}]+(?:['\u2019][^\W_{_CJK_RANGES}]+)*")
_SPACE = re.compile(r"\s+")
# ASCII and fullwidth sentence ends (the ideographic full stop, ! and ?).
_SENTENCE_END = frozenset(".!?\u3002\uff01\uff1f")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOP_EN = _words(
    "a an the and or but if then so of to in on at by for from with about as into onto "
    "over under between through during before after above below up down out off again "
    "is are was were be been being am do does did done have has had having will would "
    "shall should can could may might must i me my mine we us our you your he him his "
    "she her it its they them their this that these those there here what which who "
    "whom whose when where why how all any both each few more most other some such only "
    "own same than too very just also s t d ll re ve m please"
)
# Function characters in Chinese questions; not content even when they differ.
_STOP_ZH = frozenset("的了是在吗呢吧啊呀么和与及或也都就还又很把被给着过个这那有我你他她它们")

_NEGATION_EN = _words(
    "not no never none nobody nothing neither nor without cannot cant dont doesnt didnt "
    "isnt arent wasnt werent wont wouldnt shouldnt couldnt hasnt havent hadnt"
)
_NEGATION_ZH = frozenset("不没无非别未勿莫否")


@dataclass(frozen=True, slots=True)
class PairText:
    tokens: tuple[str, ...]  # casefolded, capped at MAX_TOKENS
    content: tuple[str, ...]  # tokens minus stop words
    caps: tuple[str, ...]  # capitalised words, casefolded, in order of appearance
    numbers: frozenset[str]
    negations: int
    chars: str  # casefolded text, whitespace collapsed, capped at MAX_CHARS
    # Derived once per text (a stored candidate is compared with many queries); only
    # ever read: the pairwise features combine them into new objects.
    token_set: frozenset[str]
    content_set: frozenset[str]
    token_counts: Counter[str]
    content_counts: Counter[str]
    token_positions: dict[str, int]  # first occurrence of each token
    content_positions: dict[str, int]
    char2: frozenset[str]
    char3: frozenset[str]
    bigrams: frozenset[tuple[str, ...] | str]
    trigrams: frozenset[tuple[str, ...] | str]


def analyse(text: str) -> PairText:
    """What the pair features read of one text (a pure function of it)."""
    tokens: list[str] = []
    caps: list[str] = []
    negations = 0
    previous_end = 0
    for match in _TOKEN.finditer(text, 0, MAX_CHARS * 2):
        if len(tokens) >= MAX_TOKENS:
            break
        word = match.group()
        folded = word.casefold()
        # A capital at a sentence start says nothing about names.
        sentence_start = not tokens or any(
            c in _SENTENCE_END for c in text[previous_end : match.start()]
        )
        if not sentence_start and word[0].isupper():
            caps.append(folded)
        previous_end = match.end()
        tokens.append(folded)
        if folded in _NEGATION_EN or folded in _NEGATION_ZH or folded.endswith("n't"):
            negations += 1
    token_tuple = tuple(tokens)
    content = tuple(t for t in tokens if t not in _STOP_EN and t not in _STOP_ZH)
    numbers = frozenset(t for t in tokens if any(c.isdigit() for c in t))
    chars = _SPACE.sub(" ", text[: MAX_CHARS * 2].casefold()).strip()[:MAX_CHARS]
    return PairText(
        tokens=token_tuple,
        content=content,
        caps=tuple(caps),
        numbers=numbers,
        negations=negations,
        chars=chars,
        token_set=frozenset(token_tuple),
        content_set=frozenset(content),
        token_counts=Counter(token_tuple),
        content_counts=Counter(content),
        token_positions=_first_positions(token_tuple),
        content_positions=_first_positions(content),
        char2=frozenset(_ngrams(chars, 2)),  # type: ignore[arg-type]
        char3=frozenset(_ngrams(chars, 3)),  # type: ignore[arg-type]
        bigrams=frozenset(_ngrams(token_tuple, 2)),
        trigrams=frozenset(_ngrams(token_tuple, 3)),
    )


def _jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _ngrams(seq: tuple[str, ...] | str, n: int) -> set[tuple[str, ...] | str]:
    """Character n-grams of a string, or token n-grams of a token tuple."""
    return {seq[i : i + n] for i in range(len(seq) - n + 1)}


def lcs_length(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """Longest common subsequence length, bit-parallel (Hyyro 2004).

    One pass over `b` with a few big-integer operations per item, so it stays fast for
    long inputs where the quadratic table would not.
    """
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, item in enumerate(a):
        masks[item] = masks.get(item, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for item in b:
        u = v & masks.get(item, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def _first_positions(seq: tuple[str, ...]) -> dict[str, int]:
    positions: dict[str, int] = {}
    for i, item in enumerate(seq):
        positions.setdefault(item, i)
    return positions


def _kendall_tau(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """Rank agreement of the items both sequences contain (first occurrences), -1..1.

    Symmetric: swapping `a` and `b` gives the same number of discordant pairs. With
    fewer than two shared items there is no evidence either way: 0.0, the midpoint.
    """
    return _kendall_tau_of(_first_positions(a), _first_positions(b))


def _kendall_tau_of(pa: dict[str, int], pb: dict[str, int]) -> float:
    """`_kendall_tau` from the two sequences' first positions."""
    shared = sorted((pa[t], pb[t]) for t in pa.keys() & pb.keys())
    k = len(shared)
    if k < 2:
        return 0.0
    seen: list[int] = []
    inversions = 0
    for _, pos_b in shared:
        inversions += len(seen) - bisect_right(seen, pos_b)
        insort(seen, pos_b)
    return 1.0 - 4.0 * inversions / (k * (k - 1))


def _displacement(ta: PairText, tb: PairText) -> float:
    """Mean |relative position in a - relative position in b| over shared tokens."""
    pa, pb = ta.token_positions, tb.token_positions
    shared = pa.keys() & pb.keys()
    if not shared:
        return 0.0
    na, nb = max(len(ta.tokens) - 1, 1), max(len(tb.tokens) - 1, 1)
    return sum(abs(pa[t] / na - pb[t] / nb) for t in shared) / len(shared)


def _grams_jaccard(
    ga: frozenset[Any], gb: frozenset[Any], a: tuple[str, ...] | str, b: tuple[str, ...] | str
) -> float:
    """Jaccard of two n-gram sets of the sequences `a` and `b`."""
    if not ga and not gb:
        # Both too short for n-grams: fall back to whole-sequence equality.
        return 1.0 if a == b else 0.0
    return len(ga & gb) / len(ga | gb)


def pair_features(a: str, b: str, similarity: float) -> list[float]:
    """The feature vector for one pair, in `FEATURE_NAMES` order."""
    return pair_features_of(analyse(a), analyse(b), similarity)


def pair_features_of(ta: PairText, tb: PairText, similarity: float) -> list[float]:
    """`pair_features` of two analysed texts (`analyse`), which may be memoised."""
    len_a, len_b = len(ta.tokens), len(tb.tokens)
    shared_multiset = sum((ta.token_counts & tb.token_counts).values())
    lcs = lcs_length(ta.tokens, tb.tokens)

    bigram_shared = len(ta.bigrams & tb.bigrams)
    # How many bigrams could be shared given the shared tokens: a pair of texts with the
    # same words in another order keeps few of them.
    bigram_possible = max(min(len(ta.bigrams), len(tb.bigrams), shared_multiset - 1), 1)

    content_a, content_b = ta.content_set, tb.content_set
    shared_content = sum((ta.content_counts & tb.content_counts).values())
    content_lcs = lcs_length(ta.content, tb.content)
    one_side = len(content_a ^ content_b)
    all_content = len(content_a | content_b)

    caps_shared = set(ta.caps) & set(tb.caps)
    caps_order = _kendall_tau(
        tuple(t for t in ta.caps if t in caps_shared),
        tuple(t for t in tb.caps if t in caps_shared),
    )

    return [
        float(similarity),
        _jaccard(ta.token_set, tb.token_set),
        _grams_jaccard(ta.char2, tb.char2, ta.chars, tb.chars),
        _grams_jaccard(ta.char3, tb.char3, ta.chars, tb.chars),
        min(len_a, len_b) / max(len_a, len_b, 1),
        lcs / max(len_a, len_b, 1),
        lcs / shared_multiset if shared_multiset else 0.0,
        content_lcs / shared_content if shared_content else 0.0,
        _kendall_tau_of(ta.token_positions, tb.token_positions),
        _kendall_tau_of(ta.content_positions, tb.content_positions),
        _displacement(ta, tb),
        _grams_jaccard(ta.bigrams, tb.bigrams, ta.tokens, tb.tokens),
        _grams_jaccard(ta.trigrams, tb.trigrams, ta.tokens, tb.tokens),
        min(bigram_shared / bigram_possible, 1.0),
        math.log1p(one_side),
        one_side / all_content if all_content else 0.0,
        _jaccard(set(ta.caps), set(tb.caps)),
        caps_order,
        _jaccard(ta.numbers, tb.numbers),
        float(abs(ta.negations - tb.negations)),
    ]
