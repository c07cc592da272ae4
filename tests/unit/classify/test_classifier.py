"""The classifier as the pipeline uses it: messages, precedence, settings, logging."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.classify.classifier import (
    CHECK_ORDER,
    ClassifierSettings,
    NonCacheableClass,
    RequestClassifier,
)

from .conftest import judge

EVERY = ClassifierSettings()
# One example per class, each firing only its own class.
EXAMPLES = {
    NonCacheableClass.ENTITY_ID: "Where is order #A12345?",
    NonCacheableClass.WRITE_INTENT: "Cancel the dinner reservation",
    NonCacheableClass.PERSONALIZED: "Is my flight delayed?",
    NonCacheableClass.TIME_SENSITIVE: "What's the weather in Oslo today?",
    NonCacheableClass.UNRESOLVED_FOLLOWUP: "what about it?",
}


def test_the_last_user_turn_is_judged(classifier: RequestClassifier) -> None:
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Cancel my subscription"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "What is the capital of Peru?"},
    ]
    assert classifier.classify(messages, None, None, EVERY).cacheable


def test_content_parts_are_read(classifier: RequestClassifier) -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "text", "text": "Cancel my subscription"},
            ],
        }
    ]
    verdict = classifier.classify(messages, None, None, EVERY)
    assert verdict.reason is NonCacheableClass.WRITE_INTENT


def test_earlier_turns_are_counted_from_dialogue_roles(classifier: RequestClassifier) -> None:
    alone = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Explain this concept"},
    ]
    dialogue = [
        {"role": "user", "content": "What is entropy?"},
        {"role": "assistant", "content": "A measure of disorder."},
        {"role": "user", "content": "Explain this concept"},
    ]
    assert classifier.classify(alone, None, None, EVERY).cacheable
    verdict = classifier.classify(dialogue, None, None, EVERY)
    assert verdict.reason is NonCacheableClass.UNRESOLVED_FOLLOWUP


def test_no_user_turn_is_cacheable(classifier: RequestClassifier) -> None:
    assert classifier.classify([], None, None, EVERY).cacheable
    assert classifier.classify([{"role": "system", "content": "hi"}], None, None, EVERY).cacheable


def test_precedence_follows_check_order(classifier: RequestClassifier) -> None:
    assert CHECK_ORDER == (
        NonCacheableClass.ENTITY_ID,
        NonCacheableClass.WRITE_INTENT,
        NonCacheableClass.PERSONALIZED,
        NonCacheableClass.TIME_SENSITIVE,
        NonCacheableClass.UNRESOLVED_FOLLOWUP,
    )
    # An ID, a write, a personal record and a date at once: the ID is reported.
    text = "Cancel my order #A12345 today"
    assert judge(classifier, text).reason is NonCacheableClass.ENTITY_ID
    # Without the ID, the write wins over the personal record and the date.
    assert judge(classifier, "Cancel my order today").reason is NonCacheableClass.WRITE_INTENT


@pytest.mark.parametrize("cls", list(NonCacheableClass))
def test_each_class_fires_and_can_be_switched_off(
    classifier: RequestClassifier, cls: NonCacheableClass
) -> None:
    text = EXAMPLES[cls]
    assert judge(classifier, text, earlier=True).reason is cls
    without = ClassifierSettings(enabled=frozenset(NonCacheableClass) - {cls})
    assert judge(classifier, text, without, earlier=True).cacheable


def test_nothing_enabled_means_cacheable(classifier: RequestClassifier) -> None:
    none = ClassifierSettings(enabled=frozenset())
    for text in EXAMPLES.values():
        assert judge(classifier, text, none).cacheable


def test_policy_patterns_fire_case_insensitively(classifier: RequestClassifier) -> None:
    settings = ClassifierSettings(
        extra_patterns={NonCacheableClass.PERSONALIZED: (r"\bloyalty tier\b", r"会员等级")}
    )
    verdict = judge(classifier, "What perks come with the Loyalty Tier gold?", settings)
    assert verdict.reason is NonCacheableClass.PERSONALIZED
    assert verdict.rule == "policy.extra"
    assert judge(classifier, "我的会员等级有什么权益", settings).rule == "policy.extra"


def test_policy_patterns_of_a_disabled_class_do_not_fire(classifier: RequestClassifier) -> None:
    settings = ClassifierSettings(
        enabled=frozenset({NonCacheableClass.WRITE_INTENT}),
        extra_patterns={NonCacheableClass.PERSONALIZED: ("loyalty tier",)},
    )
    assert judge(classifier, "What perks come with the loyalty tier?", settings).cacheable


def test_policy_patterns_follow_precedence(classifier: RequestClassifier) -> None:
    settings = ClassifierSettings(extra_patterns={NonCacheableClass.TIME_SENSITIVE: ("refund",)})
    # An ID outranks the policy's time pattern.
    assert judge(classifier, "refund for order #A12345", settings).rule.startswith("ids.")


SECRET_TEXTS = [
    "Cancel subscription ZEBRA-SECRET for jane.secret@example.com",
    "Tell me about the weather in Secretville today",
    "what about secretproject?",
    "我的账户 秘密计划 余额",
    "Is my secret flight delayed?",
]


@pytest.mark.parametrize("text", SECRET_TEXTS + list(EXAMPLES.values()))
def test_rule_never_contains_user_text(classifier: RequestClassifier, text: str) -> None:
    settings = ClassifierSettings(extra_patterns={NonCacheableClass.WRITE_INTENT: ("secret",)})
    for verdict in (judge(classifier, text), judge(classifier, text, settings, earlier=True)):
        words = {w.strip("?.,!").lower() for w in text.split() if len(w) > 3}
        assert not any(word and word in verdict.rule.lower() for word in words), verdict.rule
        assert len(verdict.rule) <= 40


def test_long_turns_are_judged_on_head_and_tail(classifier: RequestClassifier) -> None:
    filler = "This paragraph only describes the history of the lighthouse. " * 200
    assert judge(classifier, filler + "Cancel my subscription.").reason is (
        NonCacheableClass.WRITE_INTENT
    )
    assert judge(classifier, "Cancel my subscription. " + filler).reason is (
        NonCacheableClass.WRITE_INTENT
    )


def test_malformed_messages_do_not_raise(classifier: RequestClassifier) -> None:
    odd: list[Any] = [
        [None, 5, {"role": "user"}],
        [{"role": "user", "content": None}],
        [{"role": "user", "content": [None, "hi", {"type": "text"}]}],
        [{"role": "user", "content": {"unexpected": 1}}],
    ]
    for messages in odd:
        assert classifier.classify(messages, None, None, EVERY).cacheable
