"""personalized: questions about the asker's own records."""

from __future__ import annotations

import pytest

from gateway.classify.classifier import NonCacheableClass, RequestClassifier

from .conftest import judge, only

PERSONAL = only(NonCacheableClass.PERSONALIZED)


@pytest.mark.parametrize(
    "text",
    [
        "What's my account balance?",
        "Where is my order?",
        "When does my subscription renew?",
        "I forgot my password",
        "Is my flight delayed?",
        "Summarise our team's roadmap",
        "How much do I owe on my credit card?",
        "我的账户余额是多少",
        "我的订单到哪了",
        "我的密码忘了怎么办",
        "我的快递到哪了",
        "我们公司的年假政策",
    ],
)
def test_own_records_are_personal(classifier: RequestClassifier, text: str) -> None:
    assert judge(classifier, text, PERSONAL).reason is NonCacheableClass.PERSONALIZED, text


@pytest.mark.parametrize(
    "text",
    [
        "Can you review my code?",
        "Improve my essay about climate change",
        "My cat keeps scratching the sofa, why?",
        "How do I open a bank account?",
        "我的论文怎么写开头",
        "我的代码报错了怎么办",
    ],
)
def test_generic_possessions_are_not_records(classifier: RequestClassifier, text: str) -> None:
    assert judge(classifier, text, PERSONAL).cacheable, text
