"""The shipped local reviewer: its weights load, swaps are rejected, paraphrases kept.

The examples are written for these tests (no evaluation data is copied here).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from gateway.review.features import FEATURE_NAMES
from gateway.review.local import MODEL_NAME, LocalPairReviewer, LocalPairWeights
from gateway.review.model import ReviewerModelFormatError
from gateway.review.protocol import LOCAL, Reviewer, ReviewVerdict

SIMILARITY = 0.88  # inside the default review band

SWAPS = [
    (
        "Book a flight from Paris to Rome for tomorrow morning",
        "Book a flight from Rome to Paris for tomorrow morning",
    ),
    ("Did Microsoft acquire GitHub?", "Did GitHub acquire Microsoft?"),
    ("How do I convert Celsius to Fahrenheit?", "How do I convert Fahrenheit to Celsius?"),
    ("Why did Alice call Bob yesterday?", "Why did Bob call Alice yesterday?"),
    (
        "What is the exchange rate from euros to dollars?",
        "What is the exchange rate from dollars to euros?",
    ),
    ("从北京到上海的高铁要多久", "从上海到北京的高铁要多久"),
    ("把人民币换成美元", "把美元换成人民币"),
    ("小明打了小红吗", "小红打了小明吗"),
]

PARAPHRASES = [
    ("How do I reset my password?", "How can I reset my password?"),
    ("What is the capital of Australia?", "What's the capital city of Australia?"),
    ("Explain how photosynthesis works in plants", "How does photosynthesis work in plants?"),
    ("What are the symptoms of the flu?", "What symptoms does the flu cause?"),
    ("怎么修改微信密码", "如何修改微信密码"),
    ("如何学习英语口语", "怎样学习英语口语"),
    ("今天天气怎么样", "今天的天气如何"),
]


@pytest.fixture(scope="module")
def reviewer() -> LocalPairReviewer:
    return LocalPairReviewer()


def test_packaged_weights_load(reviewer: LocalPairReviewer) -> None:
    assert reviewer.name == MODEL_NAME == "local-pair-v1"
    weights = reviewer.weights
    assert set(weights.thresholds) == {"en", "zh"}
    assert all(0.0 < t < 1.0 for t in weights.thresholds.values())
    assert weights.similarity_scale in ("calibrated", "raw")
    assert weights.model.feature_names == FEATURE_NAMES


def test_it_is_a_reviewer(reviewer: LocalPairReviewer) -> None:
    as_protocol: Reviewer = reviewer
    assert as_protocol.name == "local-pair-v1"
    assert as_protocol.kind == LOCAL  # never sent the band below the threshold


@pytest.mark.parametrize(("a", "b"), SWAPS)
def test_word_order_and_role_swaps_are_rejected(
    reviewer: LocalPairReviewer, a: str, b: str
) -> None:
    assert not reviewer.decide(a, b, SIMILARITY).same_meaning


@pytest.mark.parametrize(("a", "b"), PARAPHRASES)
def test_clear_paraphrases_are_accepted(reviewer: LocalPairReviewer, a: str, b: str) -> None:
    assert reviewer.decide(a, b, SIMILARITY).same_meaning


@pytest.mark.parametrize(("a", "b"), SWAPS + PARAPHRASES)
def test_scores_are_symmetric_probabilities(reviewer: LocalPairReviewer, a: str, b: str) -> None:
    forward, backward = reviewer.score(a, b, SIMILARITY), reviewer.score(b, a, SIMILARITY)
    assert forward == backward
    assert 0.0 <= forward <= 1.0


def test_deterministic_across_instances() -> None:
    a, b = PARAPHRASES[0]
    assert LocalPairReviewer().score(a, b, 0.9) == LocalPairReviewer().score(a, b, 0.9)


async def test_review_returns_a_verdict(reviewer: LocalPairReviewer) -> None:
    verdict = await reviewer.review(*PARAPHRASES[0], similarity=SIMILARITY)
    assert isinstance(verdict, ReviewVerdict)
    assert verdict.same_meaning
    assert verdict.reviewer == "local-pair-v1"
    assert verdict.score == reviewer.score(*PARAPHRASES[0], SIMILARITY)


async def test_the_tenant_and_its_budget_change_nothing(reviewer: LocalPairReviewer) -> None:
    # It spends no tokens: even a zero budget is not a reason to refuse.
    verdict = await reviewer.review(
        *PARAPHRASES[0], similarity=SIMILARITY, tenant="acme", budget_tokens=0
    )
    assert verdict == await reviewer.review(*PARAPHRASES[0], similarity=SIMILARITY)


def test_fast_enough_to_run_inline(reviewer: LocalPairReviewer) -> None:
    pairs = (SWAPS + PARAPHRASES) * 20
    started = time.perf_counter()
    for a, b in pairs:
        reviewer.decide(a, b, SIMILARITY)
    per_pair = (time.perf_counter() - started) / len(pairs)
    assert per_pair < 0.001  # ~0.1 ms measured; generous for a busy CI box


def test_mixed_languages_use_the_strictest_threshold(reviewer: LocalPairReviewer) -> None:
    weights = reviewer.weights
    strictest = max(weights.thresholds.values())
    assert weights.threshold("en", "zh") == strictest
    assert weights.threshold("en", "en") == weights.thresholds["en"]
    assert weights.threshold("xx") == strictest


def test_thresholds_can_be_replaced(reviewer: LocalPairReviewer) -> None:
    # An operator may pick another operating point from the weights file.
    lenient = dataclasses.replace(reviewer.weights, thresholds={"en": 0.0, "zh": 0.0})
    assert LocalPairReviewer(lenient).decide(*SWAPS[0], SIMILARITY).same_meaning


def _packaged_document() -> dict[str, Any]:
    import importlib.resources

    text = importlib.resources.files("gateway.review").joinpath("models/local-pair-v1.json")
    document: dict[str, Any] = orjson.loads(text.read_bytes())
    return document


def test_weights_file_records_its_provenance() -> None:
    document = _packaged_document()
    assert document["name"] == "local-pair-v1"
    assert document["similarity_scale"] in ("calibrated", "raw")
    assert set(document["trained_on"]) >= {"paws_wiki_dev_en", "pawsx_dev_zh"}
    assert document["features"] == list(FEATURE_NAMES)


@pytest.mark.parametrize(
    "change",
    [
        {"format": 99},
        {"thresholds": {}},
        {"thresholds": {"en": 1.5}},
        {"similarity_scale": "cosine"},
        {"steps": {"not_a_feature": {"cuts": [], "values": [0.0]}}},
    ],
)
def test_broken_weights_are_refused(change: dict[str, Any]) -> None:
    document = {**_packaged_document(), **change}
    with pytest.raises(ReviewerModelFormatError):
        LocalPairWeights.from_dict(document)


def test_load_reads_packaged_or_given_weights(tmp_path: Path) -> None:
    packaged = LocalPairReviewer.load()
    path = tmp_path / "weights.json"
    path.write_bytes(orjson.dumps(_packaged_document()))
    assert LocalPairReviewer.load(path).weights == packaged.weights


def test_a_remembered_pair_scores_as_a_fresh_reviewer_scores_it(
    reviewer: LocalPairReviewer,
) -> None:
    pairs = [
        ("flights from Paris to Rome", "flights from Rome to Paris", 0.97),
        ("How do I sort a list in Python?", "How can I sort a list in Python?", 0.96),
        ("How do I sort a list in Python?", "How can I sort a list in Python?", 0.30),
    ]
    for query, candidate, similarity in pairs * 2:
        fresh = LocalPairReviewer(reviewer.weights)
        assert reviewer.score(query, candidate, similarity) == fresh.score(
            query, candidate, similarity
        )
    # The similarity is part of what is remembered.
    assert reviewer.score(*pairs[1]) != reviewer.score(*pairs[2])
