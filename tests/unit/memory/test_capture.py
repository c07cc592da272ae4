"""Rule-based capture keeps first-person statements and decisions, nothing else."""

from __future__ import annotations

import pytest

from gateway.memory.capture import extract_statements


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I prefer window seats.", ["I prefer window seats."]),
        ("Thanks! My manager's name is Priya. Can you help?", ["My manager's name is Priya."]),
        ("We decided to ship on Friday. What next?", ["We decided to ship on Friday."]),
        ("Let's go with the blue design", ["Let's go with the blue design"]),
        ("我喜欢喝绿茶。今天天气怎么样？", ["我喜欢喝绿茶。"]),
        ("我的邮箱是工作邮箱。", ["我的邮箱是工作邮箱。"]),
        ("好的，我们决定用方案B。", ["好的，我们决定用方案B。"]),
    ],
)
def test_statements_are_captured(text: str, expected: list[str]) -> None:
    assert extract_statements(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "What is the capital of France?",
        "Do I prefer tea or coffee?",
        "Explain how transformers work.",
        "Summarise this article for me.",
        "今天天气怎么样？",
        "ok",
    ],
)
def test_questions_and_requests_are_not(text: str) -> None:
    assert extract_statements(text) == []
