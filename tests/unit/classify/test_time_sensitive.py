"""time_sensitive: answers that depend on when the question is asked."""

from __future__ import annotations

import pytest

from gateway.classify.classifier import NonCacheableClass, RequestClassifier

from .conftest import judge, only

TIME = only(NonCacheableClass.TIME_SENSITIVE)

ENGLISH = [
    "What's the weather in Paris today?",
    "Who is the current president of France?",
    "What is the latest version of Android?",
    "What's Apple's stock price right now?",
    "Who won the Super Bowl?",
    "How old is Tom Hanks?",
    "Who has the most followers on Instagram?",
    "When is the next World Cup?",
    "What is the exchange rate from euros to dollars?",
    "Is the Louvre still open?",
    "Any breaking news about the election?",
    "How many goals has Messi scored for Inter Miami?",
    "What will the weather be like in two weeks?",
]
ENGLISH_FIXED = [
    "Who won the Peloponnesian War?",
    "What is the capital of Australia?",
    "Who was the first president of the United States?",
    "Who is the current president of France in 2011?",
    "What is the largest planet in the solar system?",
    "How many bones are in the human body?",
    "What causes inflation?",
    "Explain the theory of relativity.",
    "What happened in 1999 in East Timor?",
    "Who won season 2 of Project Runway?",
    "What is electric current?",
    "How do I get the current directory in Python?",
]
CHINESE = [
    "今天天气怎么样",
    "明天北京会下雨吗",
    "现在几点了",
    "最新的iPhone是哪款",
    "腾讯的股价是多少",
    "美元兑人民币汇率",
    "美国现任总统是谁",
    "最近有什么新闻",
]
CHINESE_FIXED = ["长城有多长", "水的沸点是多少度", "李白是哪个朝代的诗人", "光合作用是什么"]


@pytest.mark.parametrize("text", ENGLISH + CHINESE)
def test_time_dependent_questions(classifier: RequestClassifier, text: str) -> None:
    assert judge(classifier, text, TIME).reason is NonCacheableClass.TIME_SENSITIVE, text


@pytest.mark.parametrize("text", ENGLISH_FIXED + CHINESE_FIXED)
def test_fixed_facts_stay_cacheable(classifier: RequestClassifier, text: str) -> None:
    assert judge(classifier, text, TIME).cacheable, text
