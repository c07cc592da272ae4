"""write_intent: requests to act, in English and Chinese, against questions about acting."""

from __future__ import annotations

import pytest

from gateway.classify.classifier import NonCacheableClass, RequestClassifier

from .conftest import judge, only

WRITE = only(NonCacheableClass.WRITE_INTENT)

ENGLISH_WRITES = [
    "Cancel my Netflix subscription.",
    "Please delete my account",
    "Can you transfer $200 from checking to savings?",
    "Could you book a table for two at Luigi's tonight?",
    "I want to cancel my gym membership",
    "I'd like to order a large pepperoni pizza",
    "Send an email to my landlord saying the heating is broken",
    "Set an alarm for 6:30 tomorrow",
    "Remind me to call mom at 5",
    "Turn off the lights in the kitchen",
    "Play some jazz",
    "Text Joe that I'm running late",
    "Schedule a meeting with Sam on Friday at 3pm",
    "Add milk to my shopping list",
    "Would you mind refunding my last payment?",
    "I need my reservation cancelled",
    "Unsubscribe me from the newsletter",
    "From now on, call me Alex",
    "Pay my electricity bill",
]
ENGLISH_INFORMATIONAL = [
    "How do I cancel a subscription?",
    "What does DELETE do in SQL?",
    "How can I transfer files between two servers?",
    "What is the best way to book cheap flights?",
    "Is it possible to cancel an order on Amazon after it ships?",
    "Explain how bank transfers work.",
    "Write a Python function that deletes duplicates from a list.",
    "Remove duplicates from a list in Python.",
    "Change this sentence to passive voice: the cat chased the mouse.",
    "Order these numbers from smallest to largest: 5, 2, 9.",
    "Book recommendations for a ten year old who likes dragons",
    "Cancel a running promise in JavaScript.",
    "Play the role of a pirate and tell me a story.",
    "Create a function that checks whether a number is prime.",
    "Draft an email to my landlord about the heating.",
]
CHINESE_WRITES = [
    "帮我取消订单",
    "请删除我的账户",
    "给我转账500元到妈妈的账户",
    "我要退款",
    "帮我预订明天去北京的机票",
    "麻烦把闹钟设置到早上七点",
    "打开客厅的灯",
    "我想取消订阅",
    "帮我发邮件给老板",
]
CHINESE_INFORMATIONAL = [
    "如何取消订阅\uff1f",
    "怎么删除微信聊天记录",
    "退款一般需要多久\uff1f",
    "支付宝转账有手续费吗",
    "帮我写一首关于秋天的诗",
    "请帮我修改这段代码的语法错误",
    "如何在Excel中删除重复项",
]


@pytest.mark.parametrize("text", ENGLISH_WRITES + CHINESE_WRITES)
def test_requests_to_act_are_writes(classifier: RequestClassifier, text: str) -> None:
    verdict = judge(classifier, text, WRITE)
    assert verdict.reason is NonCacheableClass.WRITE_INTENT, text


@pytest.mark.parametrize("text", ENGLISH_INFORMATIONAL + CHINESE_INFORMATIONAL)
def test_questions_about_acting_and_text_work_stay_cacheable(
    classifier: RequestClassifier, text: str
) -> None:
    assert judge(classifier, text, WRITE).cacheable, text


def test_rule_names_the_language_and_the_form(classifier: RequestClassifier) -> None:
    assert judge(classifier, "Cancel my order", WRITE).rule == "en.write.imperative"
    assert judge(classifier, "Can you cancel my order?", WRITE).rule == "en.write.modal"
    assert judge(classifier, "I want to cancel my order", WRITE).rule == "en.write.desire"
    assert judge(classifier, "帮我取消订单", WRITE).rule == "zh.write.request"


# Requests for a text that start with an acting verb: what LLM traffic is mostly made of.
# Before the request-for-text rules, 17 of 40 such prompts written for a held-out check
# were bypassed (10 by the rules, 7 more by the write-intent model).
REQUESTS_FOR_TEXT = [
    "Make a grocery list for a vegetarian week",
    "Make a checklist for moving to a new apartment",
    "Schedule a weekly study plan for the SAT",
    "Set up a morning routine for productivity",
    "Create a table of the first ten prime numbers",
    "Make a table comparing Python and Java",
    "Order the countries by population",
    "Sort these fruits by sugar content",
    "Remove the jargon from this paragraph",
    "Delete every other word in this sentence",
    "Add a catchy title to my blog post",
    "Change the tone of this email to be more formal",
    "Change the style of this poem to sound like Shakespeare",
    "Cancel culture pros and cons",
    "Stock buybacks explained",
    "Transfer pricing basics",
    "Email templates for following up after an interview",
    "Buy or rent a house: which is better?",
    "Cancel vs terminate a contract: what's the difference?",
    "Reserve judgment: is coffee healthy?",
    "Change my mind about pineapple pizza",
    "Send-off speech for a retiring colleague",
    "Write a toast for my sister's wedding",
]

# Acts that look like those: the same verbs on records, bookings, lists and money.
ACTS_LIKE_REQUESTS_FOR_TEXT = [
    "schedule me a table for 2 at red lobster at 8",
    "make a reservation for two at 7pm at luigi's",
    "remove milk from my shopping list",
    "delete my shopping list",
    "make a new playlist called road trip",
    "set up a meeting with john on monday",
    "cancel my order or delete it",
    "order a pizza from dominos",
]


@pytest.mark.parametrize("text", REQUESTS_FOR_TEXT)
def test_requests_for_text_stay_cacheable(classifier: RequestClassifier, text: str) -> None:
    assert judge(classifier, text, WRITE).cacheable, text


@pytest.mark.parametrize("text", ACTS_LIKE_REQUESTS_FOR_TEXT)
def test_acts_worded_like_requests_for_text_are_writes(
    classifier: RequestClassifier, text: str
) -> None:
    assert judge(classifier, text, WRITE).reason is NonCacheableClass.WRITE_INTENT, text
