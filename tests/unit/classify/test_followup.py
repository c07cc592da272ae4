"""unresolved_followup: turns that mean nothing without the earlier ones."""

from __future__ import annotations

import pytest

from gateway.classify.classifier import NonCacheableClass, RequestClassifier

from .conftest import judge, only

FOLLOWUP = only(NonCacheableClass.UNRESOLVED_FOLLOWUP)

ENGLISH = [
    "what about it?",
    "and the cheaper one",
    "How about in Python?",
    "why?",
    "tell me more",
    "what about him",
    "that one",
    "the second one",
    "do it again",
    "same for Java",
    "and?",
    "Can you make it shorter?",
    "What does that mean?",
    "What are its advantages?",
    "How does it compare to Rust?",
    "Who wrote it?",
    "Give me another example.",
    "What practical applications does this have in finance?",
    "What is the second law?",
]
ENGLISH_SELF_CONTAINED = [
    "Is it safe to eat raw eggs?",
    "What is it like to live in Paris?",
    "How long does it take to learn Spanish?",
    "How do plants make their food?",
    "What is the capital of France?",
    "Why do cats purr when they are happy?",
    "If a number is even, is it divisible by 2?",
    "How do I reverse a list without modifying it?",
    "Einstein was born in Germany; where did he die?",
    "What is the second law of thermodynamics?",
    "Hello, how are you?",
    "Thanks!",
]
CHINESE = [
    "那它呢",
    "再便宜点的",
    "那个呢",
    "还有呢",
    "为什么",
    "继续",
    "第二个",
    "这个多少钱",
    "它有什么缺点\uff1f",
]
CHINESE_SELF_CONTAINED = [
    "中国的首都是哪里\uff1f",
    "光合作用是什么",
    "如何学习英语",
    "其他星球上有水吗",
]


@pytest.mark.parametrize("text", ENGLISH + CHINESE)
def test_followups_are_unresolved(classifier: RequestClassifier, text: str) -> None:
    verdict = judge(classifier, text, FOLLOWUP, earlier=True)
    assert verdict.reason is NonCacheableClass.UNRESOLVED_FOLLOWUP, text


@pytest.mark.parametrize("text", ["what about it?", "那它呢", "tell me more"])
def test_a_followup_alone_is_still_unresolved(classifier: RequestClassifier, text: str) -> None:
    assert not judge(classifier, text, FOLLOWUP, earlier=False).cacheable


@pytest.mark.parametrize("text", ENGLISH_SELF_CONTAINED + CHINESE_SELF_CONTAINED)
def test_self_contained_questions_stay_cacheable(classifier: RequestClassifier, text: str) -> None:
    assert judge(classifier, text, FOLLOWUP, earlier=True).cacheable, text


def test_deictic_noun_phrase_needs_a_dialogue(classifier: RequestClassifier) -> None:
    # "this concept" points at something shown earlier; alone it points at nothing shown.
    assert not judge(classifier, "Explain this concept", FOLLOWUP, earlier=True).cacheable
    assert judge(classifier, "Explain this concept", FOLLOWUP, earlier=False).cacheable


def test_quoted_material_resolves_demonstratives(classifier: RequestClassifier) -> None:
    text = 'Translate this sentence: "the weather is lovely today"'
    assert judge(classifier, text, FOLLOWUP, earlier=True).cacheable
