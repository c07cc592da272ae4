"""The non-cacheable classifier: may this chat request be served from / stored in the cache?

Runs before any cache lookup on the last user turn (plus the request's tools). Returns
cacheable, or the first class that fires, in this order:

    entity_id -> write_intent -> personalized -> time_sensitive -> unresolved_followup

The order puts the cheapest, least ambiguous checks first and makes the reported reason
the most actionable one ("that turn names an order number" says more than "it also
mentions today").

Classification never carries user text: `rule` is a short, fixed rule name
("en.write.imperative", "ids.email", "policy.extra") because it is logged.

English write intents are the rules' first, then a learnt model's for short commands the
rules do not list (`write_model`; policy `classifier.write_intent_model`).

Cost: regular expressions compiled at construction (about 0.1 ms per short turn; long
turns are read on their head and tail), plus spaCy only where a rule needs it: tags when
an English turn is short or has a pronoun or demonstrative (follow-ups, ~1 ms), entities
when it has a relative time word (relative dates, ~1.5 ms more). Most turns need neither.
Parses are memoised by the analyzer for the entity comparison that follows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from gateway.classify.followup import FollowupRules
from gateway.classify.ids import IdDetector
from gateway.classify.lexicon_zh import ChineseRules
from gateway.classify.messages import last_user_turn, normalize
from gateway.classify.personal_en import EnglishPersonalRules
from gateway.classify.time_en import EnglishTimeRules
from gateway.classify.tools import ToolInspector
from gateway.classify.write_en import EnglishWriteRules
from gateway.classify.write_model import WriteIntentModel
from gateway.nlp import TextAnalyzer, detect_language


class NonCacheableClass(StrEnum):
    WRITE_INTENT = "write_intent"
    TIME_SENSITIVE = "time_sensitive"
    ENTITY_ID = "entity_id"
    UNRESOLVED_FOLLOWUP = "unresolved_followup"
    PERSONALIZED = "personalized"


# Precedence when several classes apply (see the module docstring).
CHECK_ORDER: tuple[NonCacheableClass, ...] = (
    NonCacheableClass.ENTITY_ID,
    NonCacheableClass.WRITE_INTENT,
    NonCacheableClass.PERSONALIZED,
    NonCacheableClass.TIME_SENSITIVE,
    NonCacheableClass.UNRESOLVED_FOLLOWUP,
)


@dataclass(frozen=True, slots=True)
class ClassifierSettings:
    """Per-policy switches: which classes apply and extra regexes for each."""

    enabled: frozenset[NonCacheableClass] = frozenset(NonCacheableClass)
    # Case-insensitive regexes searched in the last user turn; a match fires the class.
    extra_patterns: Mapping[NonCacheableClass, tuple[str, ...]] = field(default_factory=dict)
    # The learnt second opinion on English write intents (`write_model`).
    write_model: bool = True


@dataclass(frozen=True, slots=True)
class Classification:
    reason: NonCacheableClass | None  # None: cacheable
    rule: str  # the rule that decided; never user text (it is logged)

    @property
    def cacheable(self) -> bool:
        return self.reason is None


CACHEABLE = Classification(None, "none")
# Policies are few and stable; past this many distinct pattern sets the cache is reset.
_MAX_COMPILED_SETS = 256
# Long turns (pasted documents) are judged on their head and tail, where instructions and
# questions sit; this keeps the rules well under a millisecond whatever the length.
_HEAD_CHARS = 1200
_TAIL_CHARS = 1200
# Rules that need the tagger (follow-up pronouns, date entities) are about short turns; a
# longer one brings its own context, so it is not parsed here.
_PARSE_LIMIT_CHARS = 1000


class RequestClassifier:
    """Holds compiled rules and compiled policy patterns only; no per-request state."""

    def __init__(self, analyzer: TextAnalyzer, write_model: WriteIntentModel | None = None) -> None:
        self._analyzer = analyzer
        self._ids = IdDetector()
        self._en_write = EnglishWriteRules()
        self._en_write_model = (
            write_model if write_model is not None else WriteIntentModel.packaged()
        )
        self._en_personal = EnglishPersonalRules()
        self._en_time = EnglishTimeRules()
        self._zh = ChineseRules()
        self._followups = FollowupRules()
        self._tools = ToolInspector()
        self._compiled: dict[tuple[str, ...], re.Pattern[str]] = {}
        self._cjk = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
        self._latin = re.compile(r"[A-Za-z]{2}")

    def classify(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        tool_choice: Any,
        settings: ClassifierSettings,
        text: str | None = None,
    ) -> Classification:
        """Classify a chat request: its last user turn (or `text`, the part of it to
        judge), and its tools."""
        turn = last_user_turn(messages)
        if text is None:
            text = turn.text if turn is not None else ""
        has_earlier = turn.has_earlier_turns if turn is not None else bool(messages)
        # Tools that act make any turn a write, but an ID in the turn is reported first.
        if NonCacheableClass.WRITE_INTENT in settings.enabled and self._tools.acting(
            tools, tool_choice
        ):
            before = self.classify_text(
                text,
                has_earlier_turns=has_earlier,
                settings=_only(settings, NonCacheableClass.ENTITY_ID),
            )
            if not before.cacheable:
                return before
            return Classification(NonCacheableClass.WRITE_INTENT, "tools.acting")
        return self.classify_text(text, has_earlier_turns=has_earlier, settings=settings)

    def classify_text(
        self, text: str, *, has_earlier_turns: bool, settings: ClassifierSettings
    ) -> Classification:
        """Classify one user turn; `has_earlier_turns` says whether a dialogue precedes it."""
        if not text.strip() or not settings.enabled:
            return CACHEABLE
        view = _TextView(text, self._analyzer, self._cjk, self._latin)
        for cls in CHECK_ORDER:
            if cls not in settings.enabled:
                continue
            patterns = settings.extra_patterns.get(cls)
            if patterns and self._policy_pattern(patterns).search(view.normalized):
                return Classification(cls, "policy.extra")
            rule = self._check(cls, view, has_earlier_turns, settings)
            if rule is not None:
                return Classification(cls, rule)
        return CACHEABLE

    def _check(
        self,
        cls: NonCacheableClass,
        view: _TextView,
        has_earlier: bool,
        settings: ClassifierSettings,
    ) -> str | None:
        # Mixed-language turns ("帮我 cancel the order") get both rule sets.
        rule: str | None = None
        if cls is NonCacheableClass.ENTITY_ID:
            return self._ids.detect(view.normalized)
        if cls is NonCacheableClass.WRITE_INTENT:
            if view.has_cjk:
                rule = self._zh.write(view.normalized)
            if rule is None and view.has_latin:
                rule = self._en_write.write(view.lower)
            if (
                rule is None
                and settings.write_model
                and view.language == "en"
                # The model's own gates turn most turns (questions) away first.
                and self._en_write_model.fires(view.lower)
                and not self._en_write.rules_out_act(view.lower)
            ):
                rule = "en.write.model"
            return rule
        if cls is NonCacheableClass.PERSONALIZED:
            if view.has_cjk:
                rule = self._zh.personal(view.normalized)
            if rule is None and view.has_latin:
                rule = self._en_personal.personal(view.lower)
            return rule
        if cls is NonCacheableClass.TIME_SENSITIVE:
            if view.has_cjk:
                rule = self._zh.time(view.normalized)
            if rule is None and view.has_latin:
                rule = self._en_time.time(view.lower, view.english_doc())
            return rule
        # Follow-ups judge the turn as a whole, so only its main language's rules apply.
        if view.language == "zh":
            return self._followups.chinese(view.normalized, has_earlier_turns=has_earlier)
        return self._followups.english(
            view.lower, view.tagged, view.tokens, has_earlier_turns=has_earlier
        )

    def _policy_pattern(self, patterns: tuple[str, ...]) -> re.Pattern[str]:
        """One compiled alternation per pattern set, compiled on first use and kept."""
        compiled = self._compiled.get(patterns)
        if compiled is None:
            if len(self._compiled) >= _MAX_COMPILED_SETS:
                self._compiled.clear()
            compiled = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
            self._compiled[patterns] = compiled
        return compiled


class _TextView:
    """One turn in the forms the rules read, computed once; the parse only on demand."""

    __slots__ = (
        "_analyzer",
        "_doc",
        "has_cjk",
        "has_latin",
        "language",
        "lower",
        "normalized",
        "original",
    )

    def __init__(
        self, text: str, analyzer: TextAnalyzer, cjk: re.Pattern[str], latin: re.Pattern[str]
    ) -> None:
        self.original = text
        if len(text) > _HEAD_CHARS + _TAIL_CHARS:
            text = f"{text[:_HEAD_CHARS]}\n{text[-_TAIL_CHARS:]}"
        self.normalized = normalize(text)
        self.lower = self.normalized.lower()
        self.has_cjk = cjk.search(self.normalized) is not None
        self.has_latin = latin.search(self.normalized) is not None
        self.language = detect_language(self.normalized)
        self._analyzer = analyzer
        self._doc: Any = None

    def doc(self) -> Any | None:
        """The spaCy parse of the turn, or None for long turns (see _PARSE_LIMIT_CHARS)."""
        if len(self.original) > _PARSE_LIMIT_CHARS:
            return None
        if self._doc is None:
            # The original text: the analyzer memoises by text, and the entity
            # comparison parses the same turn.
            self._doc = self._analyzer.doc(self.original)
        return self._doc

    def tagged(self) -> Any | None:
        """The parse with tags only (no entities), or None for long turns."""
        if len(self.original) > _PARSE_LIMIT_CHARS:
            return None
        if self._doc is not None:
            return self._doc
        return self._analyzer.tagged(self.original)

    def tokens(self) -> Any | None:
        """The tokens `tagged` would have, without running a model; None for long turns."""
        if len(self.original) > _PARSE_LIMIT_CHARS:
            return None
        return self._analyzer.tokens(self.original)

    def english_doc(self) -> Callable[[], Any] | None:
        """The parse for short English turns; Chinese-pipeline docs have no English
        entities."""
        if self.language != "en" or len(self.original) > _PARSE_LIMIT_CHARS:
            return None
        return self.doc


def _only(settings: ClassifierSettings, cls: NonCacheableClass) -> ClassifierSettings:
    enabled = settings.enabled & {cls}
    return ClassifierSettings(
        enabled=enabled, extra_patterns=settings.extra_patterns, write_model=settings.write_model
    )
