"""The checks behind each non-cacheable class, as a registry (`CHECKS`).

A class fires when one of its checks returns a rule name; the checks of a class run in
order and the first name wins. Mixed-language turns ("帮我 cancel the order") get both
languages' rules for writes, personal records and time; follow-ups judge the turn as a
whole, so only its main language's rules apply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gateway.classify.classes import NonCacheableClass
from gateway.classify.followup import FollowupRules
from gateway.classify.ids import IdDetector
from gateway.classify.personal_en import EnglishPersonalRules
from gateway.classify.rules_zh import ChineseRules
from gateway.classify.time_en import EnglishTimeRules
from gateway.classify.view import TextView
from gateway.classify.write_en import EnglishWriteRules
from gateway.classify.write_model import WriteIntentModel


@dataclass(frozen=True, slots=True)
class ClassifierRules:
    """The compiled rule sets one classifier holds."""

    ids: IdDetector
    en_write: EnglishWriteRules
    en_write_model: WriteIntentModel
    en_personal: EnglishPersonalRules
    en_time: EnglishTimeRules
    zh: ChineseRules
    followups: FollowupRules


@dataclass(frozen=True, slots=True)
class CheckInput:
    """What a check reads: the turn, whether a dialogue precedes it, and the one policy
    switch a check needs (the learnt write model)."""

    view: TextView
    has_earlier_turns: bool
    write_model: bool


# A check: the rule name that fires, or None.
Check = Callable[[ClassifierRules, CheckInput], str | None]


def _ids(rules: ClassifierRules, given: CheckInput) -> str | None:
    return rules.ids.detect(given.view.normalized)


def _zh_write(rules: ClassifierRules, given: CheckInput) -> str | None:
    return rules.zh.write(given.view.normalized) if given.view.has_cjk else None


def _en_write(rules: ClassifierRules, given: CheckInput) -> str | None:
    return rules.en_write.write(given.view.lower) if given.view.has_latin else None


def _en_write_model(rules: ClassifierRules, given: CheckInput) -> str | None:
    view = given.view
    if (
        given.write_model
        and view.language == "en"
        # The model's own gates turn most turns (questions) away first.
        and rules.en_write_model.fires(view.lower)
        and not rules.en_write.rules_out_act(view.lower)
    ):
        return "en.write.model"
    return None


def _zh_personal(rules: ClassifierRules, given: CheckInput) -> str | None:
    return rules.zh.personal(given.view.normalized) if given.view.has_cjk else None


def _en_personal(rules: ClassifierRules, given: CheckInput) -> str | None:
    return rules.en_personal.personal(given.view.lower) if given.view.has_latin else None


def _zh_time(rules: ClassifierRules, given: CheckInput) -> str | None:
    return rules.zh.time(given.view.normalized) if given.view.has_cjk else None


def _en_time(rules: ClassifierRules, given: CheckInput) -> str | None:
    view = given.view
    return rules.en_time.time(view.lower, view.english_doc()) if view.has_latin else None


def _zh_followup(rules: ClassifierRules, given: CheckInput) -> str | None:
    if given.view.language != "zh":
        return None
    return rules.followups.chinese(given.view.normalized, has_earlier_turns=given.has_earlier_turns)


def _en_followup(rules: ClassifierRules, given: CheckInput) -> str | None:
    view = given.view
    if view.language == "zh":
        return None
    return rules.followups.english(
        view.lower, view.tagged, view.tokens, has_earlier_turns=given.has_earlier_turns
    )


CHECKS: Mapping[NonCacheableClass, Sequence[Check]] = {
    NonCacheableClass.ENTITY_ID: (_ids,),
    NonCacheableClass.WRITE_INTENT: (_zh_write, _en_write, _en_write_model),
    NonCacheableClass.PERSONALIZED: (_zh_personal, _en_personal),
    NonCacheableClass.TIME_SENSITIVE: (_zh_time, _en_time),
    NonCacheableClass.UNRESOLVED_FOLLOWUP: (_zh_followup, _en_followup),
}
