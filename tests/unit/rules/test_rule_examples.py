"""Every example of every rule file, through its compiled rule and, where the example
names a class, through the whole classifier."""

from __future__ import annotations

import pytest

from gateway.classify.classifier import ClassifierSettings, RequestClassifier
from gateway.nlp import TextAnalyzer
from gateway.rules.compile import Example, Rule, RuleBook

_BOOK = RuleBook.packaged()
_RULES = [rule for rule_file in _BOOK.files() for rule in rule_file.rules()]


def _cases(kind: str) -> list[tuple[Rule, Example]]:
    return [
        (rule, example)
        for rule in _RULES
        for example in (rule.positive if kind == "positive" else rule.negative)
    ]


def _case_id(case: tuple[Rule, Example]) -> str:
    rule, example = case
    return f"{rule.name}:{example.text[:40]}"


@pytest.fixture(scope="module")
def classifier() -> RequestClassifier:
    return RequestClassifier(TextAnalyzer.load(), rule_book=_BOOK)


def test_every_rule_has_a_positive_example() -> None:
    assert _RULES, "no rules loaded"
    missing = [rule.name for rule in _RULES if not rule.positive]
    assert missing == []


@pytest.mark.parametrize("case", _cases("positive"), ids=_case_id)
def test_positive_example_matches(case: tuple[Rule, Example]) -> None:
    rule, example = case
    assert rule.pattern.search(example.text) is not None


@pytest.mark.parametrize("case", _cases("negative"), ids=_case_id)
def test_negative_example_does_not_match(case: tuple[Rule, Example]) -> None:
    rule, example = case
    assert rule.pattern.search(example.text) is None


_CLASSED = [case for kind in ("positive", "negative") for case in _cases(kind)]
_CLASSED = [case for case in _CLASSED if case[1].expected_class is not None]


def test_examples_carry_classes() -> None:
    # The data names classes for the rules that decide one; the test below runs them.
    assert len(_CLASSED) >= 50


@pytest.mark.parametrize("case", _CLASSED, ids=_case_id)
def test_example_class_through_the_classifier(
    case: tuple[Rule, Example], classifier: RequestClassifier
) -> None:
    rule, example = case
    verdict = classifier.classify_text(
        example.text, has_earlier_turns=False, settings=ClassifierSettings()
    )
    got = verdict.reason.value if verdict.reason is not None else "cacheable"
    assert got == example.expected_class, (rule.name, verdict.rule)
