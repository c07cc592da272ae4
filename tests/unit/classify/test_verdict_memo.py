"""The classifier's memo of recent verdicts (gateway/classify/memo.py): a repeated turn
gets the verdict it got before, and never another policy's, another text's or another
dialogue position's verdict."""

from __future__ import annotations

from gateway.classify.classifier import (
    ClassifierSettings,
    NonCacheableClass,
    RequestClassifier,
)
from gateway.classify.memo import VerdictMemo, settings_key

EVERY = ClassifierSettings()
NO_TIME = ClassifierSettings(
    enabled=frozenset(NonCacheableClass) - {NonCacheableClass.TIME_SENSITIVE}
)
EXTRA = ClassifierSettings(extra_patterns={NonCacheableClass.WRITE_INTENT: (r"\bsort\b",)})


def _verdict(
    classifier: RequestClassifier, text: str, settings: ClassifierSettings, earlier: bool = False
):  # type: ignore[no-untyped-def]
    return classifier.classify_text(text, has_earlier_turns=earlier, settings=settings)


def test_a_repeated_turn_gets_the_same_verdict(classifier: RequestClassifier) -> None:
    text = "What's the weather in Oslo today? (memo test)"
    first = _verdict(classifier, text, EVERY)
    assert first.reason is NonCacheableClass.TIME_SENSITIVE
    assert _verdict(classifier, text, EVERY) == first


def test_another_policy_gets_its_own_verdict(classifier: RequestClassifier) -> None:
    weather = "What's the weather in Oslo today? (policy test)"
    assert _verdict(classifier, weather, EVERY).reason is NonCacheableClass.TIME_SENSITIVE
    assert _verdict(classifier, weather, NO_TIME).cacheable
    sort = "How do I sort a list in Python? (policy test)"
    assert _verdict(classifier, sort, EVERY).cacheable
    extra = _verdict(classifier, sort, EXTRA)
    assert extra.reason is NonCacheableClass.WRITE_INTENT
    assert extra.rule == "policy.extra"
    assert _verdict(classifier, sort, EVERY).cacheable


def test_another_text_or_dialogue_position_is_classified_afresh(
    classifier: RequestClassifier,
) -> None:
    assert _verdict(classifier, "How do I sort a list in Python?", EVERY).cacheable
    write = _verdict(classifier, "Cancel the dinner reservation", EVERY)
    assert write.reason is NonCacheableClass.WRITE_INTENT
    follow_up = "what about the other one?"
    alone = _verdict(classifier, follow_up, EVERY, earlier=False)
    in_dialogue = _verdict(classifier, follow_up, EVERY, earlier=True)
    # Each position's verdict is the one a classifier with no memo gives.
    fresh = RequestClassifier(classifier._analyzer)
    assert alone == _verdict(fresh, follow_up, EVERY, earlier=False)
    assert in_dialogue == _verdict(fresh, follow_up, EVERY, earlier=True)


def test_the_memo_is_bounded_and_skips_long_texts() -> None:
    memo: VerdictMemo[str] = VerdictMemo(max_entries=2, max_text_chars=10)
    key = settings_key(frozenset(NonCacheableClass), {}, True)
    memo.put("a", False, key, "first")
    memo.put("b", False, key, "second")
    assert memo.get("a", False, key) == "first"  # "a" is the most recent now
    memo.put("c", False, key, "third")
    assert len(memo) == 2
    assert memo.get("b", False, key) is None
    assert memo.get("a", True, key) is None
    memo.put("a text longer than ten", False, key, "long")
    assert memo.get("a text longer than ten", False, key) is None


def test_settings_keys_differ_by_every_setting() -> None:
    every = frozenset(NonCacheableClass)
    base = settings_key(every, {}, True)
    assert settings_key(every, {}, True) == base
    assert settings_key(every, {}, False) != base
    assert settings_key(every - {NonCacheableClass.ENTITY_ID}, {}, True) != base
    assert settings_key(every, {NonCacheableClass.ENTITY_ID: ("x",)}, True) != base
