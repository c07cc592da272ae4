"""The evaluation helpers, on tiny hand-written stand-ins for the public sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.classify.classifier import RequestClassifier
from gateway_tools.evaluation.classifier_sets import (
    ACTION_INTENTS,
    MIXED_INTENTS,
    Rate,
    eval_followups,
    eval_time_sensitivity,
    eval_write_intents,
    wilson_interval,
)


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-3)
    assert high == pytest.approx(0.9433, abs=1e-3)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and 0.0 < high < 0.2
    low, high = wilson_interval(20, 20)
    assert high == 1.0 and 0.8 < low < 1.0


def test_rate_formats_value_interval_and_counts() -> None:
    assert str(Rate(8, 10)) == "0.800 [0.490, 0.943] (8/10)"
    assert Rate(0, 0).value == 0.0


def test_action_and_mixed_intents_do_not_overlap() -> None:
    assert not set(ACTION_INTENTS) & set(MIXED_INTENTS)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    intents = tmp_path / "intents"
    intents.mkdir()
    rows = [
        {"question": "who is the current coach of the lakers", "is_dependent": "yes"},
        {"question": "what's the weather in oslo today", "is_dependent": "yes"},
        {"question": "who wrote the iliad", "is_dependent": "no"},
        {"question": "what is the boiling point of water", "is_dependent": "no"},
    ]
    (intents / "situatedqa_temp.dev.jsonl").write_text(
        "\n".join(json.dumps(r) for r in rows), encoding="utf-8"
    )
    clinc = {
        "train": [],
        "val": [
            ["transfer ten dollars to my savings account", "transfer"],
            ["book a table for two at luigi's", "restaurant_reservation"],
            ["what is the capital of peru", "definition"],
            ["how do i report a lost card", "report_lost_card"],
        ],
        "oos_train": [],
        "oos_val": [],
    }
    (intents / "clinc150_train_val.json").write_text(json.dumps(clinc), encoding="utf-8")
    followups = tmp_path / "followups"
    followups.mkdir()
    pairs = [
        {"Main Query": "What is inflation?", "Follow-Up Query": "What are its types?"},
        {"Main Query": "What is inflation?", "Follow-Up Query": "What are its types?"},
        {"Main Query": "Describe photosynthesis.", "Follow-Up Query": "Where does it happen?"},
    ]
    (followups / "a.json").write_text(json.dumps(pairs), encoding="utf-8")
    return tmp_path


def test_time_sensitivity_counts(data_dir: Path, classifier: RequestClassifier) -> None:
    result = eval_time_sensitivity(data_dir, classifier)
    assert (result.recall.hits, result.recall.n) == (2, 2)
    assert (result.false_positive_rate.hits, result.false_positive_rate.n) == (0, 2)


def test_write_intent_counts(data_dir: Path, classifier: RequestClassifier) -> None:
    result = eval_write_intents(data_dir, classifier)
    assert (result.recall.hits, result.recall.n) == (2, 2)
    assert result.false_positive_rate.n == 1 and result.false_positive_rate.hits == 0
    assert result.mixed_rate.n == 1
    assert result.snips_recall is None  # no SNIPS folder in this data dir


def test_followup_counts_deduplicate_pairs(data_dir: Path, classifier: RequestClassifier) -> None:
    result = eval_followups(data_dir, classifier)
    assert result.recall.n == 2
    assert result.recall.hits == 2
    assert result.main_false_positive_rate.n == 2
    assert result.main_false_positive_rate.hits == 0
