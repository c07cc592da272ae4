"""The difference analysis: every example of the lexicon, and the rules around it."""

from __future__ import annotations

import pytest

from gateway.difference.analysis import HARD, Difference, DifferenceAnalyser
from gateway.difference.lexicon import Lexicon, LexiconError
from gateway.difference.tokens import tokenize

ANALYSER = DifferenceAnalyser()
LEXICON = Lexicon.packaged()
EXAMPLES = [
    pytest.param(query, candidate, verdict, id=f"{language}-{index}")
    for language, section in (("en", LEXICON.en), ("zh", LEXICON.zh))
    for index, (query, candidate, verdict) in enumerate(section.examples)
]


def _verdict(difference: Difference) -> str:
    if difference.bearing:
        return "bearing"
    return "content" if difference.content else "preserving"


@pytest.mark.parametrize(("query", "candidate", "verdict"), EXAMPLES)
def test_every_lexicon_example_is_classified_as_written(
    query: str, candidate: str, verdict: str
) -> None:
    difference = ANALYSER.compare(query, candidate)
    kind, _, bearing_class = verdict.partition(":")
    assert _verdict(difference) == kind, difference
    if bearing_class:
        assert bearing_class in difference.bearing, difference


def test_the_lexicon_has_examples_of_both_meanings_in_both_languages() -> None:
    for section in (LEXICON.en, LEXICON.zh):
        verdicts = {verdict.partition(":")[0] for _, _, verdict in section.examples}
        assert {"bearing", "preserving"} <= verdicts


def test_a_malformed_lexicon_is_refused_with_the_section_named() -> None:
    with pytest.raises(LexiconError, match=r"en\.classes\.quantifier"):
        Lexicon.from_text("en: {classes: {quantifier: {meaning: maybe}}}\nzh: {}\n")
    with pytest.raises(LexiconError, match="two sections"):
        Lexicon.from_text("en: {}\n")


@pytest.mark.parametrize(
    ("text", "verbatim"),
    [
        ("What does 'a    b' print?", "'a    b'"),
        ('Is "Hello" equal to "hello"?', '"Hello"'),
        ("What does `x  = 1` do?", "`x  = 1`"),
        ("Columns: a\t\tb", "\t\t"),
    ],
)
def test_quotes_code_spans_and_tabs_are_kept_byte_for_byte(text: str, verbatim: str) -> None:
    tokens = tokenize(text, LEXICON)
    assert verbatim in {t.key for t in tokens if t.kind == "verbatim"}


def test_apostrophes_are_not_quotes_and_contractions_expand() -> None:
    keys = [t.key for t in tokenize("Don't the users' files load? What's x?", LEXICON)]
    assert "not" in keys and "users" in keys and "is" in keys
    assert not any(t.kind == "verbatim" for t in tokenize("the users' files", LEXICON))


def test_operators_and_numbers_are_tokens_of_their_own() -> None:
    keys = [t.key for t in tokenize("is 7 // 2 the same as x++ or 2 ** 3", LEXICON)]
    assert {"//", "++", "**", "7", "2", "3"} <= set(keys)


@pytest.mark.parametrize(
    ("query", "candidate"),
    [
        ("Is Python only for scripting?", "Is Python also for scripting?"),
        ("Sort the list and remove duplicates", "Sort the list or remove duplicates"),
        ("Copy the file to the server", "Copy the file from the server"),
        ("Delete every row", "Delete every other row"),
        ("Is x > 3?", "Is x >> 3?"),
        ("只用Python可以吗", "也用Python可以吗"),
        ("猫和狗能一起养吗", "猫或狗能一起养吗"),
    ],
)
def test_a_small_meaning_bearing_difference_refuses(query: str, candidate: str) -> None:
    assert ANALYSER.compare(query, candidate).refusal(1, 16)


def test_a_word_put_for_another_of_its_class_refuses_at_any_length() -> None:
    long_prefix = "In a long message with many words about our deployment and its settings, "
    difference = ANALYSER.compare(
        long_prefix + "copy the file to the server", long_prefix + "copy the file from the server"
    )
    assert difference.length_tokens > 16
    assert difference.refusal(1, 16) == ("preposition",)


def test_one_function_word_added_in_a_long_sentence_is_left_to_the_embedding() -> None:
    # PAWS-Wiki's duplicates: "crosses the river" / "crosses over the river".
    query = "It then crosses the Washita River arm of Lake Texoma near the old town bridge ."
    candidate = (
        "It then crosses over the Washita River arm of Lake Texoma near the old town bridge ."
    )
    difference = ANALYSER.compare(query, candidate)
    assert difference.bearing == ("preposition",)
    assert difference.refusal(1, 16) == ()
    assert difference.refusal(1, 100)  # the same in a short ask refuses


def test_hard_classes_refuse_in_any_rewording() -> None:
    assert {"verbatim", "number", "operator", "role_swap", "focus"} <= HARD
    difference = ANALYSER.compare(
        "Please tell me the result of 2 ** 10 in Python", "What does 2 * 10 give in Python?"
    )
    assert "operator" in difference.refusal(1, 16)


def test_the_shared_material_makes_a_substitution_a_change_of_focus() -> None:
    material = "Redis keeps data in memory. Postgres keeps data on disk."
    alone = ANALYSER.compare("Where does Postgres keep data?", "Where does Redis keep data?")
    with_material = ANALYSER.compare(
        "Where does Postgres keep data?", "Where does Redis keep data?", material
    )
    assert "focus" not in alone.bearing
    assert "focus" in with_material.bearing


def test_codes_name_what_differed() -> None:
    assert ANALYSER.compare("What is Docker?", "what is docker").code() == "punctuation"
    assert ANALYSER.compare("What is Docker", "What is Docker").code() == "none"
    tallest = ANALYSER.compare(
        "What is the tallest mountain on Earth?", "Which mountain is the tallest on Earth?"
    )
    assert tallest.code() == "reorder_block"


def test_long_asks_are_not_analysed() -> None:
    text = " ".join(["word"] * 200)
    difference = ANALYSER.compare(text, text + " more")
    assert not difference.analysed and not difference.only_preserving
