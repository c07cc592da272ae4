"""The rule compiler: references, alternations, inflections, and errors that name the
file and the rule."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gateway.rules.compile import RuleBook, RuleError, alternation, inflections


def _book(**texts: str) -> RuleBook:
    return RuleBook.from_texts({name.replace("__", "/"): text for name, text in texts.items()})


def test_word_lists_become_alternations_longest_first() -> None:
    book = _book(
        en__write="""
words:
  verbs: [set, set up, cancel]
rules:
  - name: en.write.verb
    pattern: '^(?:{@verbs})\\b'
    positive: ["set  up my alarm", "cancel it"]
    negative: ["settle it"]
"""
    )
    pattern = book.file("en/write").pattern("en.write.verb")
    match = pattern.match("set up my alarm")
    assert match is not None and match.group() == "set up"
    assert book.file("en/write").words("verbs") == ("set", "set up", "cancel")


def test_references_reach_the_folder_lexicon_and_shared_files() -> None:
    book = _book(
        shared__calendar="words:\n  weekdays: [monday, friday]\n",
        en__lexicon="words:\n  objects: [order, alarm]\nfragments:\n  n: 'one|two'\n",
        en__write="""
fragments:
  day: '(?:{@calendar.weekdays})'
rules:
  - name: en.write.day
    pattern: '{@lexicon.objects}\\s+on\\s+{@day}|{@lexicon.n}'
    positive: ["move the order on friday", "two"]
""",
    )
    assert book.file("en/write").pattern("en.write.day").search("alarm on monday")


def test_inflections_and_derived_lists() -> None:
    assert {"cancel", "cancels", "cancelled", "cancelling", "canceled"} <= inflections("cancel")
    assert {"paid", "paying", "pays"} <= inflections("pay")
    assert "signing up" in inflections("sign up")
    lexicon = 'words:\n  v: [book, pay]\n  g: {inflect: ["@v", "get"], ending: "ing"}\n'
    book = _book(en__lexicon=lexicon)
    # Both doublings of a short verb are listed ("geting" is harmless in a pattern).
    assert book.file("en/lexicon").words("g") == ("booking", "geting", "getting", "paying")


def test_alternation_is_the_same_in_every_process() -> None:
    # Ties in length sort alphabetically, not in set order (which varies per process).
    assert alternation(["bb", "aa", "ccc"]) == "ccc|aa|bb"
    code = "from gateway.rules.compile import alternation; print(alternation(['ab','ba','cd']))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert outputs == {"ab|ba|cd\n"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "rules:\n  - name: en.x.a\n    pattern: '{@nowhere}'\n",
            "en/x, rule 'en.x.a': unknown word list or fragment {@nowhere}",
        ),
        (
            "rules:\n  - name: en.x.a\n    pattern: '(unclosed'\n",
            "en/x, rule 'en.x.a': bad regular",
        ),
        (
            "rules:\n  - {name: en.x.a, pattern: a}\n  - {name: en.x.a, pattern: b}\n",
            "en/x: rule 'en.x.a' is defined twice",
        ),
        (
            "rules:\n  - {name: en.x.a, pattern: cat, positive: [dog]}\n",
            "en/x, rule 'en.x.a': positive example 'dog' does not match",
        ),
        (
            "rules:\n  - {name: en.x.a, pattern: cat, negative: [a cat]}\n",
            "en/x, rule 'en.x.a': negative example 'a cat' matches",
        ),
        ("rules:\n  - {name: en.x.a, pattern: a, flags: [LOUD]}\n", "unknown flag 'LOUD'"),
        ("rules:\n  - {pattern: a}\n", "en/x: every rule needs a name"),
        ("words:\n  w: [1, 2]\n", "en/x: word list 'w' must be a list of strings"),
        ("words:\n  w: {inflect: ['@none']}\n", "refers to unknown '@none'"),
        ("colours: [red]\n", "en/x: expected a mapping of words, fragments, rules and tables"),
        ("rules: [\n", "en/x: not valid YAML"),
    ],
)
def test_bad_files_fail_at_load_naming_file_and_rule(text: str, message: str) -> None:
    with pytest.raises(RuleError) as raised:
        RuleBook.from_texts({"en/x": text})
    assert message in str(raised.value)


def test_tables_map_forms_to_canonical_values() -> None:
    rule_file = _book(
        shared__units="""
tables:
  dimension: {length: [km, mile], mass: [kg]}
  symbols: {"$": usd}
  months: {sept: 9}
"""
    ).file("shared/units")
    assert rule_file.texts("dimension") == {"km": "length", "mile": "length", "kg": "mass"}
    # As written, too: each value with its keys, in order (the polarity axes read this).
    assert rule_file.groups("dimension") == {"length": ("km", "mile"), "mass": ("kg",)}
    assert rule_file.texts("symbols") == {"$": "usd"}
    assert rule_file.numbers("months") == {"sept": 9}
    with pytest.raises(RuleError, match="table 'months' must map to text"):
        rule_file.texts("months")
    with pytest.raises(RuleError, match="mixes lists and values"):
        RuleBook.from_texts({"en/x": "tables:\n  t: {a: [b], c: d}\n"})


def test_a_rule_name_is_unique_across_files() -> None:
    with pytest.raises(RuleError, match=r"'en\.a' is already defined in en/one"):
        RuleBook.from_texts(
            {
                "en/one": "rules: [{name: en.a, pattern: a}]",
                "en/two": "rules: [{name: en.a, pattern: b}]",
            }
        )


def test_unknown_rule_or_list_names_the_file() -> None:
    rule_file = _book(en__x="rules: [{name: en.a, pattern: a}]").file("en/x")
    with pytest.raises(RuleError, match=r"en/x: no rule named 'en\.b'"):
        rule_file.pattern("en.b")
    with pytest.raises(RuleError, match="en/x: no word list named 'w'"):
        rule_file.words("w")


def test_the_packaged_book_loads_only_on_first_use() -> None:
    code = (
        "import gateway.app, gateway.classify.classifier\n"
        "from gateway.rules.compile import RuleBook\n"
        "print(RuleBook.packaged.cache_info().currsize)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0"


def test_weekday_and_month_names_are_written_once() -> None:
    """The classifier's rules and the entity comparison read one calendar."""
    from gateway.entities.lexicon_en import EnglishLexicon
    from gateway.entities.lexicon_zh import ChineseLexicon

    book = RuleBook.packaged()
    weekdays = book.file("shared/calendar").words("weekdays")
    assert weekdays[0] == "monday" and len(weekdays) == 7
    english, chinese = EnglishLexicon.packaged(), ChineseLexicon.packaged()
    assert english.MONTHS["september"] == english.MONTHS["sept"] == english.MONTHS["sep"] == 9
    assert english.WEEKDAYS["fridays"] == "friday"
    assert set(weekdays) <= set(english.RELATIVE_NOUNS)
    assert chinese.WEEKDAYS["三"] == "wednesday" and chinese.WEEKDAYS["天"] == "sunday"
    assert book.file("en/write").pattern("en.write.self_modal_specific").search("on friday")
    assert book.file("en/time").pattern("en.time.lexicon").search("next thursday")
    # No rule spells the week out itself (the calendar's alternation is longest first).
    for rule_file in book.files():
        for rule in rule_file.rules():
            assert "monday|tuesday|wednesday" not in rule.pattern.pattern, rule.name
