"""entity_id: identifiers make an answer about one record."""

from __future__ import annotations

import pytest

from gateway.classify.classifier import NonCacheableClass, RequestClassifier

from .conftest import judge, only

IDS = only(NonCacheableClass.ENTITY_ID)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Where is order #A12345?", "ids.record"),
        ("Status of ticket 98231 please", "ids.record"),
        ("Is ticket no. 982 resolved?", "ids.record"),
        ("Refund invoice INV-2023-0042", "ids.record"),
        ("My tracking number is 1Z999AA10123456784", "ids.digits"),
        ("Activation code AB12CD34 does not work", "ids.code"),
        ("Write to jane.doe@example.com", "ids.email"),
        ("Call me at +44 20 7946 0958", "ids.phone"),
        ("Call (202) 555-0143", "ids.phone"),
        ("What is request 550e8400-e29b-41d4-a716-446655440000 doing?", "ids.uuid"),
        ("Summarise https://example.com/reports/q3", "ids.url"),
        ("Why is /usr/local/bin/python missing?", "ids.path"),
        ("Open C:\\Users\\me\\notes.txt", "ids.path"),
        ("What does ./build.sh do?", "ids.path"),
        ("Ping 192.168.1.20 for me", "ids.ip"),
        ("Pay GB82 WEST 1234 5698 7654 32", "ids.iban"),
        ("Is card 4111 1111 1111 1111 valid?", "ids.card"),
        ("订单号 2023110512345 到哪了", "ids.record"),
        ("快递单号SF1234567890查询", "ids.record"),
        ("请联系我 13812345678", "ids.phone"),
        ("我的邮箱是 test@example.com", "ids.email"),
        ("身份证号 11010519491231002X 的归属地", "ids.record"),
        ("Account 11010519491231002X", "ids.record"),
        ("Is 1Z999AA10123456784 delivered?", "ids.digits"),
        ("工单号\uff1aWO-88231 进度", "ids.record"),
    ],
)
def test_identifiers(classifier: RequestClassifier, text: str, rule: str) -> None:
    verdict = judge(classifier, text, IDS)
    assert verdict.reason is NonCacheableClass.ENTITY_ID, text
    assert verdict.rule == rule, text


@pytest.mark.parametrize(
    "text",
    [
        "What happened in 2024?",
        "Order 2024 was a good year for wine",
        "What is 1234567 * 89?",
        "Write 1000000 in scientific notation",
        "Is python3 faster than python2?",
        "How does sha256 work?",
        "Compare the RTX4090 and the RX7900",
        "Meet me at 10am",
        "2008年北京奥运会在哪天开幕",
        "Use a ratio of 1/2/3 for the mix",
    ],
)
def test_numbers_and_versions_are_not_identifiers(classifier: RequestClassifier, text: str) -> None:
    assert judge(classifier, text, IDS).cacheable, text
