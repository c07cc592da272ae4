"""Number normalisation: English words, Chinese numerals, digits as written."""

from __future__ import annotations

import pytest

from gateway.entities.numbers import canonical, digits, parse_chinese, parse_english


@pytest.mark.parametrize(
    ("run", "value"),
    [
        ("八", 8),
        ("十五", 15),
        ("二十五", 25),
        ("一百零五", 105),
        ("两千五", 2500),  # colloquial: the trailing digit is hundreds
        ("一万五", 15000),
        ("一万零五", 10005),  # 零 stops the colloquial reading
        ("一万五千", 15000),
        ("十万", 100000),
        ("一亿", 100000000),
        ("二〇二四", 2024),  # digit by digit
        ("一点五", 1.5),
    ],
)
def test_chinese_numerals(run: str, value: float) -> None:
    assert parse_chinese(run) == value


def test_chinese_non_numbers() -> None:
    assert parse_chinese("百分") is None
    assert parse_chinese("") is None


@pytest.mark.parametrize(
    ("words", "value"),
    [
        ("twenty five", 25),
        ("two hundred and fifty", 250),
        ("a dozen", 12),
        ("a hundred", 100),
        ("three million", 3_000_000),
        ("one thousand two hundred", 1200),
    ],
)
def test_english_number_words(words: str, value: int) -> None:
    assert parse_english(words.split()) == value


def test_english_non_numbers() -> None:
    assert parse_english(["a"]) is None
    assert parse_english(["twenty", "eggs"]) is None


def test_digits_keep_versions_and_drop_separators() -> None:
    assert digits("1,200") == "1200"
    assert digits("3.10") == "3.10"  # Python 3.10 is not Python 3.1
    assert digits("007") == "7"
    assert digits("2.5", 1000) == "2500"
    assert canonical(15000.0) == "15000"
    assert canonical(0.5) == "0.5"
