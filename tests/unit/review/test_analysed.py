"""The local reviewer's memo of text analyses (gateway/review/analysed.py): the same
features as without it, bounded, and never one text's analysis for another."""

from __future__ import annotations

from gateway.review.analysed import AnalysedTexts
from gateway.review.features import analyse, pair_features, pair_features_of
from gateway.review.local import LocalPairReviewer

PAIRS = [
    ("flights from Paris to Rome", "flights from Rome to Paris"),
    ("Smith hired Jones last year", "Jones hired Smith last year"),
    ("How do I sort a list in Python?", "How can I sort a list in Python?"),
    ("I don't want 2 eggs", "I want 3 eggs"),
    ("从北京到上海的火车", "从上海到北京的火车"),
    ("a", "b"),
    ("", ""),
]


def test_memoised_analyses_give_the_same_features() -> None:
    texts = AnalysedTexts()
    for _ in range(2):  # the second round reads every text from the memo
        for a, b in PAIRS:
            assert pair_features_of(texts.of(a), texts.of(b), 0.9) == pair_features(a, b, 0.9)
            assert pair_features_of(texts.of(b), texts.of(a), 0.9) == pair_features(b, a, 0.9)


def test_each_text_gets_its_own_analysis() -> None:
    texts = AnalysedTexts()
    first = texts.of("flights from Paris to Rome")
    second = texts.of("flights from Rome to Paris")
    assert first.tokens == ("flights", "from", "paris", "to", "rome")
    assert second.tokens == ("flights", "from", "rome", "to", "paris")
    assert texts.of("flights from Paris to Rome") is first
    assert texts.of("Flights from Paris to Rome") is not first


def test_the_memo_is_bounded_and_skips_long_texts() -> None:
    texts = AnalysedTexts(max_entries=2, max_text_chars=10)
    texts.of("one")
    texts.of("two")
    texts.of("one")  # most recent now
    texts.of("three")
    assert len(texts) == 2
    kept = texts.of("one")
    assert texts.of("one") is kept
    long_text = "a much longer text than ten characters"
    assert texts.of(long_text) == analyse(long_text)
    assert texts.of(long_text) is not texts.of(long_text)
    assert len(texts) == 2


def test_the_reviewer_scores_the_same_on_repeated_pairs() -> None:
    reviewer = LocalPairReviewer()
    for a, b in PAIRS:
        first = reviewer.decide(a, b, 0.95)
        again = reviewer.decide(a, b, 0.95)
        assert again == first
        assert reviewer.decide(b, a, 0.95).score == first.score
