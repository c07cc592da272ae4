"""The learnt second opinion on English write intents (`gateway.classify.write_model`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.classify.classifier import ClassifierSettings, NonCacheableClass, RequestClassifier
from gateway.classify.write_model import WriteIntentModel, WriteModelFormatError
from gateway.pipeline.classify import classifier_settings
from gateway.policy.models import ClassifierPolicy
from gateway_tools.training.train_write_model import main as train_main

WRITE_ONLY = ClassifierSettings(enabled=frozenset({NonCacheableClass.WRITE_INTENT}))
RULES_ONLY = ClassifierSettings(
    enabled=frozenset({NonCacheableClass.WRITE_INTENT}), write_model=False
)

# Commands in forms the rules do not list (word order scrambled, idioms, bare particles).
MODEL_ONLY_COMMANDS = [
    "tv on turn",
    "exit out of whisper mode",
    "get rid of tuesday the 5ths dinner",
    "tell carl my gps coordinates",
    "start a countdown for 20 minutes",
]


@pytest.mark.parametrize("text", MODEL_ONLY_COMMANDS)
def test_the_model_flags_commands_the_rules_miss(classifier: RequestClassifier, text: str) -> None:
    assert classifier.classify_text(text, has_earlier_turns=False, settings=RULES_ONLY).cacheable
    verdict = classifier.classify_text(text, has_earlier_turns=False, settings=WRITE_ONLY)
    assert verdict.reason is NonCacheableClass.WRITE_INTENT
    assert verdict.rule == "en.write.model"


@pytest.mark.parametrize(
    "text",
    [
        "how do i order new checks",  # a question about the act
        "is my front door locked",
        "cancel a promise in javascript",  # programming
        "what is the capital of france",
        "discuss the main factors contributing to climate change",
        "explain how to book a flight",
    ],
)
def test_questions_code_and_text_requests_stay_cacheable(
    classifier: RequestClassifier, text: str
) -> None:
    verdict = classifier.classify_text(text, has_earlier_turns=False, settings=WRITE_ONLY)
    assert verdict.cacheable, verdict


def test_policy_switch_reaches_the_settings() -> None:
    assert classifier_settings(ClassifierPolicy()).write_model is True
    off = ClassifierPolicy.model_validate({"write_intent_model": False})
    assert classifier_settings(off).write_model is False


def test_gates_keep_the_model_to_short_single_sentence_commands() -> None:
    model = WriteIntentModel({"u:fan": 10.0}, bias=-5.0, threshold=0.5, max_tokens=5)
    assert model.fires("on the fan")
    assert not model.fires("the lights")  # scores low
    assert not model.fires("how do i get the fan on")  # question about the act
    assert not model.fires("put the fan on. then we talk")  # two sentences
    assert not model.fires("fan " * 6)  # longer than max_tokens
    assert not model.fires("   ")
    assert model.probability("fan") == pytest.approx(1 / (1 + 2.718281828459045**-5.0))


def test_packaged_weights_load_and_record_their_provenance() -> None:
    model = WriteIntentModel.packaged()
    assert 0.5 <= model.threshold < 1.0
    assert len(model.weights) > 1000
    assert model.fires("please turn on the living room lights")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("not json", "valid JSON"),
        ("[]", "JSON object"),
        ('{"format": 2}', "unsupported format"),
        ('{"format": 1, "weights": {}}', "non-empty"),
        ('{"format": 1, "weights": {"u:a": 1}, "bias": 0, "max_tokens": 3}', "bad field"),
        (
            '{"format": 1, "weights": {"u:a": 1}, "bias": 0, "threshold": 1.5, "max_tokens": 3}',
            "threshold",
        ),
    ],
)
def test_bad_weights_are_refused_with_a_reason(document: str, message: str) -> None:
    with pytest.raises(WriteModelFormatError, match=message):
        WriteIntentModel.from_json(document)


def _fixture_data(root: Path) -> None:
    """A small CLINC-shaped file: lights commands act, weather questions do not."""
    rooms = ["kitchen", "bedroom", "hall", "garage", "office", "porch", "attic", "den"]
    train = []
    for i, room in enumerate(rooms * 5):
        train.append([f"turn on the {room} lights number {i % 4}", "smart_home"])
        train.append([f"switch off the {room} fan now", "smart_home"])
        train.append([f"what is the weather like in the {room} town {i % 4}", "weather"])
        train.append([f"tell me a fact about the {room}", "fun_fact"])
    (root / "intents").mkdir(parents=True)
    document = {"train": train, "val": [], "oos_train": [["the sky", "oos"]] * 3}
    (root / "intents" / "clinc150_train_val.json").write_text(json.dumps(document))


def test_training_writes_weights_the_runtime_loads(tmp_path: Path) -> None:
    _fixture_data(tmp_path / "data")
    out = tmp_path / "weights.json"
    assert train_main(["--data", str(tmp_path / "data"), "--out", str(out)]) == 0
    model = WriteIntentModel.from_path(out)
    assert model.fires("turn on the kitchen lights number 2")
    assert not model.fires("tell me a fact about the kitchen")
    written = json.loads(out.read_text())
    assert "CLINC150 train" in written["provenance"]["data"]
    cv = written["cross_validated_on_clinc_train"]
    assert cv["rules_or_model"]["recall"] >= cv["rules_only"]["recall"]
