"""Numbers written as digits, English words or Chinese numerals, to one canonical string.

`$20`, `20 dollars` and `twenty dollars` must compare equal, and so must `一万五`,
`15000` and `1.5万`; `3.10` and `3.1` must not (Python 3.10 is not Python 3.1), so
decimals written with digits keep their digits.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

EN_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
EN_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
EN_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
EN_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50,
    "hundredth": 100,
}  # fmt: skip
EN_NUMBER_WORDS = (*EN_UNITS, *EN_TENS, *EN_SCALES, "dozen", "and", "a")

ZH_DIGITS = {
    "零": 0, "\u3007": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5,
    "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
ZH_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
ZH_BIG_UNITS = {"万": 10**4, "亿": 10**8}
ZH_NUMERAL_CHARS = "".join((*ZH_DIGITS, *ZH_SMALL_UNITS, *ZH_BIG_UNITS))


def canonical(value: float | int | Decimal) -> str:
    """`15000.0` -> `15000`, `0.5` -> `0.5`."""
    number = Decimal(str(value))
    if number == number.to_integral_value():
        return str(int(number))
    return format(number.normalize(), "f")


def digits(text: str, multiplier: int = 1) -> str:
    """Digits as written (`1,200` -> `1200`, `3.10` stays), scaled by a word or suffix
    (`2.5k`, `3万`) when there is one."""
    plain = text.replace(",", "")
    if multiplier != 1:
        try:
            return canonical(Decimal(plain) * multiplier)
        except InvalidOperation:
            return plain
    if "." in plain:
        return plain
    return plain.lstrip("0") or "0"


def parse_english(words: list[str]) -> int | None:
    """`twenty five`, `two hundred and fifty`, `a dozen`, `three million` -> int."""
    total, current, seen = 0, 0, False
    for word in words:
        if word == "and":
            continue
        if word == "a":
            current = max(current, 1)
            continue
        if word in EN_UNITS:
            current += EN_UNITS[word]
        elif word in EN_TENS:
            current += EN_TENS[word]
        elif word == "dozen":
            current = max(current, 1) * 12
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in EN_SCALES:
            total += max(current, 1) * EN_SCALES[word]
            current = 0
        else:
            return None
        seen = True
    return total + current if seen else None


def parse_chinese(run: str) -> float | None:
    """`二十五` -> 25, `一万五` -> 15000 (colloquial: the trailing digit counts in the next
    unit down), `一百零五` -> 105, `二〇二四` -> 2024, `一点五` -> 1.5."""
    if "点" in run:
        whole, _, fraction = run.partition("点")
        integer = parse_chinese(whole) if whole else 0
        if integer is None or not fraction or any(c not in ZH_DIGITS for c in fraction):
            return None
        return float(f"{int(integer)}.{''.join(str(ZH_DIGITS[c]) for c in fraction)}")
    if not run or len(run) > 24:
        return None  # no quantity is written with 25 numerals; "一一一…" is not a number
    if all(c in ZH_DIGITS for c in run):  # digit by digit: 二〇二四
        return int("".join(str(ZH_DIGITS[c]) for c in run))
    total, section, number = 0, 0, 0
    last_unit, after_zero = 1, False
    for char in run:
        if char in ZH_DIGITS:
            after_zero = after_zero or char in "零〇"  # 一万零五 = 10005, not 15000
            number = ZH_DIGITS[char]
        elif char in ZH_SMALL_UNITS:
            after_zero = False
            last_unit = ZH_SMALL_UNITS[char]
            section += (number or 1) * last_unit
            number = 0
        elif char in ZH_BIG_UNITS:
            after_zero = False
            last_unit = ZH_BIG_UNITS[char]
            total = (total + section + number) * last_unit
            section, number = 0, 0
        else:
            return None
    if number and last_unit >= 100 and not after_zero:
        number *= last_unit // 10  # 一万五 = 15000, 三百五 = 350
    return total + section + number
