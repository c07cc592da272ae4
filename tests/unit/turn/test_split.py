"""Splitting a user turn into the ask (compared by meaning) and the material (compared
exactly), one case per rule, and the bounds that keep it cheap on hostile input."""

from __future__ import annotations

import time

import pytest

from gateway.turn import ask_length, parse_last_user_turn, split_turn
from gateway.turn.split import MAX_SPLIT_CHARS, normalise_material

MAX = 300
POLICY = "Refunds: unopened items may be returned within 45 days of delivery. " * 6


@pytest.mark.parametrize(
    ("text", "ask", "material_starts", "rule"),
    [
        (
            "What is the tallest mountain on Earth?",
            "What is the tallest mountain on Earth?",
            [],
            "plain",
        ),
        # short quoted words stay in the ask, where the entity check compares them
        ('What does "carpe diem" mean?', 'What does "carpe diem" mean?', [], "plain"),
        (
            "Translate into French: I love cheese",
            "Translate into French",
            ["I love cheese"],
            "instruction",
        ),
        ("翻译成英文：今天天气很好", "翻译成英文", ["今天天气很好"], "instruction"),
        (
            "Summarize the following:\nPayment is due within 30 days.",
            "Summarize the following",
            ["Payment is due"],
            "instruction",
        ),
        (
            f"Context: {POLICY}\n\nQuestion: Can I return shoes after 40 days?",
            "Can I return shoes after 40 days?",
            ["Refunds:"],
            "labelled",
        ),
        (
            f"Context: {POLICY}\nCan I return shoes after 40 days?",
            "Can I return shoes after 40 days?",
            ["Refunds:"],
            "labelled",
        ),
        (
            "背景：我们的退款政策允许在30天内退货。\n问题：40天后还能退货吗？",
            "40天后还能退货吗？",
            ["我们的退款政策"],
            "labelled",
        ),
        (
            "Why does this fail?\n```python\nx = [1, 2]\nprint(x[2])\n```",
            "Why does this fail?",
            ["```python"],
            "marked",
        ),
        (
            "Why does this fail?\n\ndef f(x):\n    return x[2]\nprint(f([1]))",
            "Why does this fail?",
            ["def f(x):"],
            "marked",
        ),
        (
            "| name | age |\n|---|---|\n| Ann | 30 |\nWho is older than 25?",
            "Who is older than 25?",
            ["| name | age |"],
            "marked",
        ),
        (
            "name,age,city\nAnn,30,Oslo\nBob,25,Rome\nWho lives in Rome?",
            "Who lives in Rome?",
            ["name,age,city"],
            "marked",
        ),
        (
            '{"a": 1, "b": [2, 3]}\n\nWhat is the sum of b?',
            "What is the sum of b?",
            ['{"a": 1'],
            "marked",
        ),
        (
            "<context>Alpha beta gamma.</context> What is gamma?",
            "What is gamma?",
            ["<context>"],
            "marked",
        ),
        (
            "> Hi, can we move the call to Friday?\n> Bob\nDraft a polite reply.",
            "Draft a polite reply.",
            ["> Hi"],
            "marked",
        ),
        (
            "What does this script do?\n#!/usr/bin/env bash\nrm -rf /tmp/build && make",
            "What does this script do?",
            ["#!/usr/bin/env bash"],
            "lead",
        ),
        (
            f"Use the passages below to answer.\n\n{POLICY}\n\nWho pays for return shipping?",
            "Use the passages below to answer. Who pays for return shipping?",
            ["Refunds:"],
            "paragraphs",
        ),
        (
            f"{POLICY}Can I return shoes after 40 days?",
            "Can I return shoes after 40 days?",
            ["Refunds:"],
            "sentences",
        ),
        (
            "下面是周会纪要：\n\n1. 版本推迟两天。\n2. 刘洋负责补建索引。\n\n列出所有待办事项。",
            "下面是周会纪要 列出所有待办事项。",
            ["1. 版本推迟两天"],
            "instruction",
        ),
    ],
)
def test_rules(text: str, ask: str, material_starts: list[str], rule: str) -> None:
    split = split_turn(text, MAX)
    assert split.rule == rule
    assert split.ask == ask
    assert len(split.material) == len(material_starts)
    for block, start in zip(split.material, material_starts, strict=True):
        assert block.startswith(start), block


def test_a_long_turn_without_a_split_keeps_its_whole_text_as_the_ask() -> None:
    text = "word " * 200
    split = split_turn(text, MAX)
    assert split.material == () and ask_length(split.ask) > MAX


def test_material_is_compared_byte_for_byte_but_for_line_endings() -> None:
    base = "Summarize this contract:\nThe buyer pays within 30 days.\nLate fees apply."
    edited = base.replace("30", "60")
    spaced = base.replace("pays within", "pays  within")
    tabbed = "Count the columns:\nalice\t\t42\nbob\t7\t1"
    assert split_turn(base, MAX).material != split_turn(edited, MAX).material
    # A run of spaces or an empty TSV column is content, never normalised away...
    assert split_turn(base, MAX).material != split_turn(spaced, MAX).material
    assert (
        split_turn(tabbed, MAX).material != split_turn(tabbed.replace("\t\t", "\t"), MAX).material
    )
    # ...line endings are not (editors and platforms change them on their own).
    assert split_turn(base, MAX).material == split_turn(base.replace("\n", "\r\n"), MAX).material
    # ...but indentation is code's structure
    assert normalise_material("if x:\n    a\nb") != normalise_material("if x:\n    a\n    b")


def test_cjk_characters_count_three_times() -> None:
    assert ask_length("abc") == 3
    assert ask_length("北京") == 6


def test_text_parts_are_paragraphs_and_attachments_are_digests() -> None:
    document = {"type": "text", "text": POLICY}
    question = {"type": "text", "text": "Can I return shoes after 40 days?"}
    image = {"type": "image_url", "image_url": {"url": "https://example.test/a.png"}}
    turn = parse_last_user_turn(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [document, question, image]},
        ],
        MAX,
    )
    assert turn.index == 1
    assert turn.ask == "Can I return shoes after 40 days?"
    assert len(turn.material) == 1 and len(turn.attachment_digests) == 1
    other = {"type": "image_url", "image_url": {"url": "https://example.test/b.png"}}
    unknown = {"type": "x-hologram", "payload": "AAAA"}
    digests = {
        parse_last_user_turn([{"role": "user", "content": ["hi", part]}], MAX).attachment_digests
        for part in (image, other, unknown)
    }
    assert len(digests) == 3  # an unknown part type is opaque bytes, never dropped


@pytest.mark.parametrize(
    "hostile",
    [
        "<a>" * 16000,
        "“x" * 25000,
        '"' * 49000,
        "```\n" * 12000,
        " |" * 24000,
        ("a = " + " " * 390 + "\n") * 120,
        "\n " * 24000,
        "Context: x\n" * 4000,
        "x" * (MAX_SPLIT_CHARS + 1),
    ],
)
def test_hostile_input_is_split_in_bounded_time(hostile: str) -> None:
    # Not a speed assertion (benchmarks measure speed): a guard against patterns that
    # backtrack quadratically, which take minutes on these inputs, not milliseconds.
    started = time.process_time()
    split_turn(hostile, MAX)
    assert time.process_time() - started < 5
