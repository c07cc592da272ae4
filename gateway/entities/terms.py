"""Near misses that change one content word: "time complexity" / "space complexity",
"皖是哪个省会的简称" / "滇是哪个省会的简称", "located inland" / "located", "深茶色" / "茶色".

No slot holds these words, and embedders score such pairs as high as paraphrases. The
check only looks at texts that are otherwise nearly identical (a near-miss detector, not
a general comparator). It aligns the two texts (English: words; Chinese: characters)
and lists what each changed region adds or substitutes, leaving out function words,
inflections, typos, known synonyms and words that only moved. What rejects a candidate
(`decisive`):

- a substituted term: one content word for another (Chinese: one or two characters for
  as many), or a Chinese antonym character (左/右, 上/下);
- an added term only when it narrows the request (`EN_QUALIFIERS`, `ZH_QUALIFIERS`:
  inland, downtown, piece, 深, 远郊...). On QQP and LCQMC duplicates, other added
  words are more often a paraphrase restating the question ("the actual source of
  gravity", "淘宝网上买东西") than a near miss.

Each text's words are read once with its other slots: `tokens`, all of them, to measure
how close two texts are; `content`, what is left after the other slots took their values
(numbers, names, dates, units, polarity words...) without function words. The per-pair
work is one or two alignments of two short texts; texts over `MAX_CHARACTERS` are
skipped.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import cache, lru_cache
from itertools import pairwise

from gateway.entities.lexicon_terms import TermLexicon
from gateway.entities.slots import TextSlots
from gateway.entities.text import alternation, joined

MAX_CHARACTERS = 300  # longer texts are documents, not near-identical questions
EN_MIN_RATIO = 0.7  # token alignment ratio below which two texts are a rephrasing
ZH_MIN_RATIO = 0.6  # character alignment ratio, same meaning

_EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)*")
_EN_CLITIC = re.compile(r"'(?:s|re|ve|ll|d|m)$")
_EN_SUFFIXES = (
    "ations", "ation", "ments", "ment", "nesses", "ness", "ities", "ity", "ings", "ing",
    "ions", "ion", "ers", "er", "ies", "ied", "ally", "ly", "ful", "ables", "able", "ible",
    "ical", "ic", "al", "ive", "ists", "ist", "isms", "ism", "ence", "ance", "ent", "ant",
    "es", "ed", "s",
)  # fmt: skip
_ZH_DROP = re.compile(r"[\W_a-z0-9]+")
_ZH_NUMERALS = re.compile(r"[零〇一二三四五六七八九十百千万亿两半]+")


# The word lists are data, loaded on first use (never at import); these derive from them.
@cache
def _zh_function() -> re.Pattern[str]:
    return re.compile(alternation(TermLexicon.packaged().ZH_FUNCTION_WORDS))


def english_tokens(text: str) -> tuple[str, ...]:
    """Lower-case words of a normalised text, clitics dropped ("what's" -> "what",
    "don't" -> "dont")."""
    return tuple(
        _EN_CLITIC.sub("", word).replace("'", "") for word in _EN_WORD.findall(text.lower())
    )


def english_content(text: str) -> tuple[str, ...]:
    """The content words among `english_tokens(text)`."""
    stopwords = TermLexicon.packaged().EN_STOPWORDS
    return tuple(
        word
        for word in english_tokens(text)
        if len(word) > 1 and not word.isdigit() and word not in stopwords
    )


def chinese_tokens(text: str) -> tuple[str, ...]:
    """Characters of a normalised, lower-case text without spaces and punctuation."""
    return tuple(re.sub(r"[\W_]+", "", text))


def chinese_content(text: str) -> tuple[str, ...]:
    """Characters of the content words: Latin words (names, codes), numerals and
    function words dropped."""
    text = _ZH_NUMERALS.sub("", _ZH_DROP.sub("", text))
    return tuple(_zh_function().sub("", text))


# (kind, query side, candidate side): "antonym" (Chinese characters), "replace" (each
# text has content the other lacks) or "add" (only one text has).
Change = tuple[str, str, str]


def compare_terms(query: TextSlots, candidate: TextSlots) -> tuple[str, str] | None:
    """The content terms only one of two near-identical texts has, if any."""
    changes = [c for c in term_changes(query, candidate) if decisive(c, query.language)]
    if not changes:
        return None
    return joined({q for _, q, _ in changes if q}), joined({c for _, _, c in changes if c})


def decisive(change: Change, language: str) -> bool:
    """Which changes reject a candidate. A substituted term does ("time complexity" /
    "space complexity", "皖" / "滇"), as long as it is one word (Chinese: one or two
    characters against as many): a longer substitution is a rephrasing. An added term
    only when it narrows the request ("located inland", "深茶色", "上海远郊"): added words
    are more often a paraphrase restating the question than a near miss."""
    kind, query, candidate = change
    if kind == "antonym":
        return True
    if language == "zh":
        if kind == "replace":
            return len(query) == len(candidate) <= 2
        added = query or candidate
        qualifiers = TermLexicon.packaged().ZH_QUALIFIERS
        return added in qualifiers or (len(added) == 2 and added[0] in qualifiers)
    if kind == "replace":
        return " " not in query and " " not in candidate
    qualifiers = TermLexicon.packaged().EN_QUALIFIERS
    return any(word in qualifiers for word in (query or candidate).split())


def term_changes(query: TextSlots, candidate: TextSlots) -> list[Change]:
    """Every content difference of two near-identical texts (none for other texts)."""
    if query.language != candidate.language or not query.tokens or not candidate.tokens:
        return []
    if max(len(query.surface), len(candidate.surface)) > MAX_CHARACTERS:
        return []
    # Both languages first align the tokens; a low ratio means different texts.
    matcher = SequenceMatcher(None, query.tokens, candidate.tokens, autojunk=False)
    if matcher.ratio() < (ZH_MIN_RATIO if query.language == "zh" else EN_MIN_RATIO):
        return []
    if query.language == "zh":
        return _chinese(matcher, query, candidate)
    return _english(matcher, query, candidate)


# English ---------------------------------------------------------------------------


def _english(matcher: SequenceMatcher[str], query: TextSlots, candidate: TextSlots) -> list[Change]:
    """`matcher` aligns the two texts' tokens."""
    q_tokens, c_tokens = query.tokens, candidate.tokens
    q_words, c_words = set(query.content), set(candidate.content)
    changes: list[Change] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        q_only = [w for w in q_tokens[i1:i2] if w in q_words and not _explained(w, c_tokens)]
        c_only = [w for w in c_tokens[j1:j2] if w in c_words and not _explained(w, q_tokens)]
        if q_only or c_only:
            kind = "replace" if q_only and c_only else "add"
            changes.append((kind, " ".join(q_only), " ".join(c_only)))
    return changes


def _explained(word: str, other: tuple[str, ...]) -> bool:
    """`word` is in `other` as itself, an inflection, a typo, a synonym or a compound
    written apart ("website" / "web site")."""
    if word in other:
        return True
    candidates = [*other, *(a + b for a, b in pairwise(other))]
    return any(_same_word(word, o) for o in candidates)


def _same_word(left: str, right: str) -> bool:
    if left == right:
        return True
    left_stem, right_stem = english_stem(left), english_stem(right)
    if left_stem in (right_stem, right) or right_stem == left:
        return True
    shorter, longer = sorted((left, right), key=len)
    if len(shorter) >= 4 and longer.startswith(shorter):
        return True  # steal / stealing, tech / technology
    shorter, longer = sorted((left_stem, right_stem), key=len)
    if len(shorter) >= 5 and longer.startswith(shorter):
        return True
    if _synonyms(left, left_stem) & _synonyms(right, right_stem):
        return True
    return _typo(left, right)


@lru_cache(maxsize=16384)
def english_stem(word: str) -> str:
    """A crude stem, enough to tell inflections and derivations apart from other words:
    develop, develops, developing, development -> develop."""
    word = TermLexicon.packaged().EN_IRREGULAR.get(word, word)
    for suffix in _EN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] in "eiy":
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]
    return word


@cache
def _en_synonym_groups() -> dict[str, set[int]]:
    """The synonym groups of each word and of its stem."""
    groups: dict[str, set[int]] = {}
    for index, group in enumerate(TermLexicon.packaged().EN_SYNONYMS):
        for member in group:
            for form in (member, english_stem(member)):
                groups.setdefault(form, set()).add(index)
    return groups


def _synonyms(word: str, stem: str) -> set[int]:
    groups: set[int] = set()
    for form in (word, stem, *_singulars(word)):
        groups |= _en_synonym_groups().get(form, set())
    return groups


def _singulars(word: str) -> tuple[str, ...]:
    """movies -> movie, studies -> study, boxes -> box (and some wrong guesses)."""
    if not word.endswith("s") or word.endswith("ss"):
        return ()
    return (word[:-1], word[:-2], word[:-3] + "y")


def _typo(left: str, right: str) -> bool:
    """One slip for words of 5-6 letters, two for longer ones; the first letter right."""
    shortest = min(len(left), len(right))
    if shortest < 5 or left[0] != right[0]:
        return False
    return levenshtein(left, right, 1 if shortest <= 6 else 2) is not None


def levenshtein(left: str, right: str, limit: int) -> int | None:
    """Edit distance when it is at most `limit`, else None."""
    if abs(len(left) - len(right)) > limit:
        return None
    previous = list(range(len(right) + 1))
    for i, char in enumerate(left, 1):
        current = [i]
        for j, other in enumerate(right, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other))
            )
        if min(current) > limit:
            return None
        previous = current
    return previous[-1] if previous[-1] <= limit else None


# Chinese ---------------------------------------------------------------------------


@cache
def _zh_groups() -> tuple[dict[str, set[int]], tuple[frozenset[str], ...]]:
    """Variant groups as the content alignment sees them (function words dropped)."""
    variants = TermLexicon.packaged().ZH_VARIANTS
    index: dict[str, set[int]] = {}
    for number, group in enumerate(variants):
        for member in group:
            for form in (member, "".join(chinese_content(member))):
                if form:
                    index.setdefault(form, set()).add(number)
    return index, variants


def _chinese(matcher: SequenceMatcher[str], query: TextSlots, candidate: TextSlots) -> list[Change]:
    """`matcher` aligns the two texts' tokens (characters)."""
    q_tokens, q_content = query.tokens, query.content
    c_tokens, c_content = candidate.tokens, candidate.content
    q_text, c_text = "".join(q_tokens), "".join(c_tokens)
    antonyms = TermLexicon.packaged().ZH_ANTONYMS
    changes: list[Change] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == 1 and j2 - j1 == 1:
            q_char, c_char = q_tokens[i1], c_tokens[j1]
            swapped = q_char in c_text or c_char in q_text  # "先有男人还是女人", reordered
            if frozenset((q_char, c_char)) in antonyms and not swapped:
                changes.append(("antonym", q_char, c_char))
    matcher = SequenceMatcher(None, q_content, c_content, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        q_span, c_span = "".join(q_content[i1:i2]), "".join(c_content[j1:j2])
        variant_groups = _zh_groups()[0]
        if variant_groups.get(q_span, set()) & variant_groups.get(c_span, set()):
            continue
        q_span = "" if _zh_explained(q_span, c_text) else q_span
        c_span = "" if _zh_explained(c_span, q_text) else c_span
        if q_span or c_span:
            changes.append(("replace" if q_span and c_span else "add", q_span, c_span))
    return changes


def _zh_explained(span: str, other: str) -> bool:
    """The span occurs in the other text (moved), or a variant of it does."""
    if not span or span in other:
        return True
    groups, variants = _zh_groups()
    for index in groups.get(span, ()):
        if any(variant in other for variant in variants[index]):
            return True
    return False
