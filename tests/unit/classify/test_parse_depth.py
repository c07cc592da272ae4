"""The analyzer's two parse depths, and that the classifier asks only for what it needs.

Most turns need no spaCy model at all, which is most of a cache miss's CPU; these tests
pin down that skipping it changes no verdict."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.classify.classifier import ClassifierSettings, NonCacheableClass, RequestClassifier
from gateway.nlp import TextAnalyzer

TEXTS = [
    "What did Barack Obama do in Chicago last week?",
    "How do I make it rise faster?",
    "Apple released the iPhone 15 in September 2023 in California.",
    "and the cheaper one?",
    "What is the boiling point of water at sea level in Celsius?",
    "Show me restaurants near the Eiffel Tower for tomorrow night.",
]


class CountingAnalyzer(TextAnalyzer):
    """The real analyzer, counting how often each depth is asked for."""

    def __init__(self, inner: TextAnalyzer) -> None:
        super().__init__(inner._pipelines["en"], inner._pipelines["zh"])
        self.calls: dict[str, int] = {"tagged": 0, "doc": 0}

    def tagged(self, text: str) -> Any:
        self.calls["tagged"] += 1
        return super().tagged(text)

    def doc(self, text: str) -> Any:
        self.calls["doc"] += 1
        return super().doc(text)


@pytest.fixture(scope="module")
def analyzer() -> TextAnalyzer:
    return TextAnalyzer.load()


@pytest.mark.parametrize("text", TEXTS)
def test_tagged_then_entities_equals_one_full_parse(analyzer: TextAnalyzer, text: str) -> None:
    full = analyzer._pipelines["en"](text)
    fresh = TextAnalyzer(analyzer._pipelines["en"], analyzer._pipelines["zh"])
    tagged = fresh.tagged(text)
    assert [t.tag_ for t in tagged] == [t.tag_ for t in full]
    assert [t.pos_ for t in tagged] == [t.pos_ for t in full]
    doc = fresh.doc(text)
    assert [(e.text, e.label_) for e in doc.ents] == [(e.text, e.label_) for e in full.ents]


def test_sample_texts_name_entities(analyzer: TextAnalyzer) -> None:
    # Otherwise the comparison above proves nothing.
    assert sum(bool(analyzer.doc(text).ents) for text in TEXTS) >= 4


def test_tokens_match_the_parsed_tokens(analyzer: TextAnalyzer) -> None:
    for text in TEXTS:
        assert [t.text for t in analyzer.tokens(text)] == [t.text for t in analyzer.doc(text)]


def test_memoised_tagged_doc_gains_entities_once(analyzer: TextAnalyzer) -> None:
    fresh = TextAnalyzer(analyzer._pipelines["en"], analyzer._pipelines["zh"])
    text = "Did Microsoft buy GitHub in 2018?"
    tagged = fresh.tagged(text)
    assert not tagged.ents  # the entity recogniser has not run yet
    assert {e.label_ for e in fresh.doc(text).ents} >= {"ORG"}
    assert fresh.tagged(text).ents  # the memo now holds the full parse


def _counted(analyzer: TextAnalyzer, text: str, *, earlier: bool) -> dict[str, int]:
    counting = CountingAnalyzer(analyzer)
    RequestClassifier(counting).classify_text(
        text, has_earlier_turns=earlier, settings=ClassifierSettings()
    )
    return counting.calls


def test_plain_long_question_needs_no_model(analyzer: TextAnalyzer) -> None:
    calls = _counted(
        analyzer, "What is the difference between a crocodile and an alligator?", earlier=True
    )
    assert calls == {"tagged": 0, "doc": 0}


def test_pronoun_needs_tags_not_entities(analyzer: TextAnalyzer) -> None:
    calls = _counted(analyzer, "How long should I bake it at two hundred degrees?", earlier=True)
    assert calls == {"tagged": 1, "doc": 0}


def test_relative_date_word_needs_entities(analyzer: TextAnalyzer) -> None:
    settings = ClassifierSettings(enabled=frozenset({NonCacheableClass.TIME_SENSITIVE}))
    counting = CountingAnalyzer(analyzer)
    RequestClassifier(counting).classify_text(
        "What is the time complexity of this sorting algorithm for large inputs?",
        has_earlier_turns=False,
        settings=settings,
    )
    assert counting.calls["doc"] == 1


def test_a_request_context_without_thincs_backend_does_not_look_it_up_again(
    analyzer: TextAnalyzer,
) -> None:
    """Request tasks do not inherit the lifespan's context, where the models were loaded:
    the analyzer hands its backend to each parse (else thinc resolves a new one through
    the package entry points, 0.6 ms a request)."""
    import contextvars

    from thinc.api import get_current_ops

    loaded = get_current_ops()
    fresh = TextAnalyzer(analyzer._pipelines["en"], analyzer._pipelines["zh"])

    def parse_in_an_empty_context() -> object:
        fresh.doc("Did Microsoft buy GitHub in 2018?")
        return get_current_ops()

    # An empty context, as a task started from one that never set the backend.
    assert contextvars.Context().run(parse_in_an_empty_context) is loaded
