"""Unresolved follow-ups: the last user turn leans on something only earlier turns define.

"What about it?", "and the cheaper one", "那它呢" mean nothing alone; cached under their
own text they would be served to a different conversation about a different "it". The
semantic layer's fingerprint already includes earlier turns, but the exact layer and the
embedding of the last turn alone cannot tell "it" from "it", so such turns are never
cached.

English uses the tagger (POS) from the shared analyzer (no parser: pronoun resolution is
approximated by clause position); Chinese uses rules on characters. The patterns and
word lists are data (`gateway/rules/data/en/followup.yaml`, `zh/followup.yaml`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gateway.rules.compile import RuleBook

_ELLIPSIS_MAX_WORDS = 6


class FollowupRules:
    """Follow-up detection for English and Chinese turns."""

    def __init__(self, rule_book: RuleBook | None = None) -> None:
        """Patterns and word lists from the rule files (`gateway/rules/data/`)."""
        book = rule_book if rule_book is not None else RuleBook.packaged()
        rules = book.file("en/followup")
        self._self_contained = rules.pattern("en.followup.self_contained")
        self._greeting = rules.pattern("en.followup.greeting")
        self._fragment = rules.pattern("en.followup.fragment")
        self._connective = rules.pattern("en.followup.connective")
        self._reference = rules.pattern("en.followup.reference")
        self._bridging = rules.pattern("en.followup.bridging")
        self._expletive_it = rules.pattern("en.followup.expletive_it")
        self._code_or_quote = rules.pattern("en.followup.code_or_quote")
        # Third-person pronouns and demonstratives; "it" gets a separate expletive check.
        self._personal = frozenset(rules.words("personal"))
        self._possessive = frozenset(rules.words("possessive"))
        self._demonstrative_words = frozenset(rules.words("demonstrative"))
        # The words whose presence lets `_english_tokens` return a pronoun or
        # demonstrative rule.
        self._referring = (
            frozenset({"it"}) | self._personal | self._possessive | self._demonstrative_words
        )
        self._indefinites = frozenset(rules.words("indefinites"))
        self._speakers = frozenset(rules.words("speakers"))
        self._time_nouns = frozenset(rules.words("time_nouns"))
        self._clause_breaks = frozenset(rules.words("clause_breaks"))
        chinese = book.file("zh/followup")
        self._zh_fragment = chinese.pattern("zh.followup.fragment")
        self._zh_connective = chinese.pattern("zh.followup.connective")
        self._zh_reference = chinese.pattern("zh.followup.reference")
        self._zh_demonstrative = chinese.pattern("zh.followup.demonstrative")
        self._zh_personal = chinese.pattern("zh.followup.personal")
        self._zh_pronoun = chinese.pattern("zh.followup.pronoun")
        self._zh_not_pronoun = chinese.pattern("zh.followup.not_pronoun")
        self._zh_clause = chinese.pattern("zh.followup.clause")
        self._zh_ends_ne = chinese.pattern("zh.followup.ends_ne")
        self._zh_noise = chinese.pattern("zh.followup.noise")

    # --- English -----------------------------------------------------------------------

    def english(
        self,
        text: str,
        doc: Callable[[], Any | None],
        tokens: Callable[[], Any | None],
        *,
        has_earlier_turns: bool,
    ) -> str | None:
        """`text` is normalised and lower-cased; `doc` tags the original on demand and
        `tokens` only splits it (both None for a turn too long to need them)."""
        stripped = self._greeting.sub("", text.strip())
        if not stripped:
            return None
        if self._self_contained.match(stripped):
            return None
        if self._fragment.match(stripped):
            return "en.followup.fragment"
        if self._connective.match(stripped):
            return "en.followup.connective"
        if self._reference.search(stripped):
            return "en.followup.reference"
        if self._bridging.match(stripped):
            return "en.followup.bridging"
        if not self._may_refer(tokens()):
            return None
        parsed = doc()
        if parsed is None:
            return None
        return self._english_tokens(stripped, parsed, has_earlier_turns)

    def _may_refer(self, tokens: Any | None) -> bool:
        """Whether `_english_tokens` could fire on these tokens, decided without tags:
        its ellipsis rule needs at most six words, its reference rules a pronoun or a
        demonstrative. Most questions have neither, and tagging costs ~1 ms."""
        if tokens is None:
            return False
        words = [t.lower_ for t in tokens if not t.is_space and not t.is_punct]
        return len(words) <= _ELLIPSIS_MAX_WORDS or not self._referring.isdisjoint(words)

    def _english_tokens(self, text: str, doc: Any, has_earlier_turns: bool) -> str | None:
        tokens = [t for t in doc if not t.is_space]
        if not tokens or not tokens[0].tag_:
            return None  # no tagger output (e.g. a mostly Chinese text)
        if self._ellipsis(text, [t for t in tokens if not t.is_punct]):
            return "en.followup.ellipsis"
        # Long texts carrying their own material (code, quotes) resolve their references.
        carries_material = self._code_or_quote.search(doc.text) is not None
        seen_noun_in_earlier_clause = False
        seen_noun = False
        seen_proper = False
        for i, tok in enumerate(tokens):
            low = tok.lower_
            if low in self._clause_breaks or tok.is_punct:
                seen_noun_in_earlier_clause = seen_noun_in_earlier_clause or seen_noun
                continue
            if low in self._demonstrative_words:
                if not carries_material:
                    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
                    rule = self._demonstrative(tokens, i, nxt, has_earlier_turns)
                    if rule is not None and not seen_noun_in_earlier_clause:
                        return rule
            elif self._unbound_pronoun(
                low,
                text,
                seen_noun=seen_noun,
                seen_proper=seen_proper,
                seen_noun_in_earlier_clause=seen_noun_in_earlier_clause,
            ):
                return "en.followup.pronoun"
            if tok.pos_ in ("NOUN", "PROPN") or low in self._indefinites:
                seen_noun = True
                seen_proper = seen_proper or tok.pos_ == "PROPN"
        return None

    def _ellipsis(self, text: str, words: list[Any]) -> bool:
        """Short and nounless: "what is transferred?", "is it?", "why does it?"."""
        return (
            len(words) <= _ELLIPSIS_MAX_WORDS
            and not any(t.pos_ in ("NOUN", "PROPN", "NUM") for t in words)
            and not any(t.lower_ in self._speakers for t in words)
            and not self._expletive_it.search(text)
            and any(t.pos_ in ("VERB", "AUX", "ADJ", "ADV", "PRON", "DET") for t in words)
        )

    def _unbound_pronoun(
        self,
        low: str,
        text: str,
        *,
        seen_noun: bool,
        seen_proper: bool,
        seen_noun_in_earlier_clause: bool,
    ) -> bool:
        """Whether the pronoun `low` has nothing in the turn to refer to: "it" and
        personal pronouns bind a noun of an earlier clause, possessives any noun before
        them ("How do plants make their food?")."""
        if low == "it":
            return not seen_noun_in_earlier_clause and not self._expletive_it.search(text)
        if low in self._personal:
            return not seen_proper and not seen_noun_in_earlier_clause
        if low in self._possessive:
            return not seen_noun and not (low in ("his", "her") and seen_proper)
        return False

    def _demonstrative(
        self, tokens: list[Any], i: int, nxt: Any, has_earlier_turns: bool
    ) -> str | None:
        low = tokens[i].lower_
        prev = tokens[i - 1] if i > 0 else None
        if nxt is not None and nxt.lower_ in self._time_nouns:
            return None
        if low == "that" and prev is not None and prev.pos_ in ("NOUN", "PROPN", "VERB", "ADJ"):
            return None  # relative clause or complementizer: "the idea that", "said that"
        if nxt is not None and nxt.pos_ in ("NOUN", "PROPN", "ADJ", "NUM"):
            # "this concept", "that code" after earlier turns points at them. In a single
            # turn it usually introduces what follows ("explain this concept: ..."), so
            # only a dialogue makes it a reference.
            return "en.followup.deictic" if has_earlier_turns else None
        if low == "that" and nxt is not None and nxt.pos_ in ("DET", "PRON"):
            return None  # complementizer: "is it true that the ..."
        return "en.followup.pronoun"

    # --- Chinese -----------------------------------------------------------------------

    def chinese(self, text: str, *, has_earlier_turns: bool) -> str | None:
        """`text` is NFKC-normalised."""
        stripped = text.strip()
        if not stripped:
            return None
        if self._zh_fragment.match(stripped):
            return "zh.followup.fragment"
        core = self._zh_noise.sub("", stripped)
        if self._zh_reference.search(stripped):
            return "zh.followup.reference"
        cleaned = self._zh_not_pronoun.sub("", stripped)
        first_clause = self._zh_clause.split(cleaned, maxsplit=1)[0]
        if self._zh_connective.match(stripped) and (
            len(core) <= 15 or self._zh_ends_ne.search(stripped)
        ):
            return "zh.followup.connective"
        if self._zh_ends_ne.search(stripped) and len(core) <= 8:
            return "zh.followup.ellipsis"
        # 它/他/她 in the first clause, or any pronoun in a short turn ("这个多少钱"),
        # points backwards.
        if self._zh_personal.search(first_clause) or (
            len(core) <= 10 and self._zh_pronoun.search(cleaned)
        ):
            return "zh.followup.pronoun"
        # "这个电视剧咋样" after earlier turns points at them; alone it usually refers to
        # something the asker sees (a forum post, a picture), not to a dialogue.
        if has_earlier_turns and self._zh_demonstrative.search(first_clause):
            return "zh.followup.deictic"
        return None
