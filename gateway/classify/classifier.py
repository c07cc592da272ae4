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

The rules' patterns and word lists are data (`gateway/rules/data/`, loaded and checked
once by `gateway.rules.compile.RuleBook`); the checks per class are a registry
(`checks.CHECKS`).

Cost: regular expressions compiled at construction (about 0.1 ms per short turn; long
turns are read on their head and tail), plus spaCy only where a rule needs it: tags when
an English turn is short or has a pronoun or demonstrative (follow-ups, ~1 ms), entities
when it has a relative time word (relative dates, ~1.5 ms more). Most turns need neither.
Parses are memoised by the analyzer for the entity comparison that follows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.classify.checks import CHECKS, CheckInput, ClassifierRules
from gateway.classify.classes import NonCacheableClass
from gateway.classify.followup import FollowupRules
from gateway.classify.ids import IdDetector
from gateway.classify.memo import VerdictMemo, settings_key
from gateway.classify.messages import last_user_turn
from gateway.classify.personal_en import EnglishPersonalRules
from gateway.classify.rules_zh import ChineseRules
from gateway.classify.time_en import EnglishTimeRules
from gateway.classify.tools import ToolInspector
from gateway.classify.view import TextView
from gateway.classify.write_en import EnglishWriteRules
from gateway.classify.write_model import WriteIntentModel
from gateway.nlp import TextAnalyzer
from gateway.rules.compile import RuleBook

__all__ = [
    "CACHEABLE",
    "CHECK_ORDER",
    "Classification",
    "ClassifierSettings",
    "NonCacheableClass",
    "RequestClassifier",
]

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


class RequestClassifier:
    """Holds compiled rules and compiled policy patterns only; no per-request state."""

    def __init__(
        self,
        analyzer: TextAnalyzer,
        write_model: WriteIntentModel | None = None,
        rule_book: RuleBook | None = None,
    ) -> None:
        self._analyzer = analyzer
        book = rule_book if rule_book is not None else RuleBook.packaged()
        self._rules = ClassifierRules(
            ids=IdDetector(book),
            en_write=EnglishWriteRules(book),
            en_write_model=(
                write_model if write_model is not None else WriteIntentModel.packaged()
            ),
            en_personal=EnglishPersonalRules(book),
            en_time=EnglishTimeRules(book),
            zh=ChineseRules(book),
            followups=FollowupRules(book),
        )
        self._tools = ToolInspector()
        self._compiled: dict[tuple[str, ...], re.Pattern[str]] = {}
        self._cjk = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
        self._latin = re.compile(r"[A-Za-z]{2}")
        # Recent verdicts (gateway/classify/memo.py): the turns a cache serves repeat.
        self._verdicts: VerdictMemo[Classification] = VerdictMemo()

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
        key = settings_key(settings.enabled, settings.extra_patterns, settings.write_model)
        known = self._verdicts.get(text, has_earlier_turns, key)
        if known is not None:
            return known
        verdict = self._classify_text(text, has_earlier_turns, settings)
        self._verdicts.put(text, has_earlier_turns, key, verdict)
        return verdict

    def _classify_text(
        self, text: str, has_earlier_turns: bool, settings: ClassifierSettings
    ) -> Classification:
        view = TextView(text, self._analyzer, self._cjk, self._latin)
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
        view: TextView,
        has_earlier: bool,
        settings: ClassifierSettings,
    ) -> str | None:
        given = CheckInput(view, has_earlier, settings.write_model)
        for check in CHECKS[cls]:
            rule = check(self._rules, given)
            if rule is not None:
                return rule
        return None

    def _policy_pattern(self, patterns: tuple[str, ...]) -> re.Pattern[str]:
        """One compiled alternation per pattern set, compiled on first use and kept."""
        compiled = self._compiled.get(patterns)
        if compiled is None:
            if len(self._compiled) >= _MAX_COMPILED_SETS:
                self._compiled.clear()
            compiled = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
            self._compiled[patterns] = compiled
        return compiled


def _only(settings: ClassifierSettings, cls: NonCacheableClass) -> ClassifierSettings:
    enabled = settings.enabled & {cls}
    return ClassifierSettings(
        enabled=enabled, extra_patterns=settings.extra_patterns, write_model=settings.write_model
    )
