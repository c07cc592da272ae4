"""The additive step-function model and its JSON validation."""

from __future__ import annotations

import math

import pytest

from gateway.review.model import AdditiveModel, ReviewerModelFormatError, StepFunction


def test_step_function_sends_a_value_at_a_cut_to_the_left() -> None:
    step = StepFunction(cuts=(0.5, 0.8), values=(-1.0, 0.0, 2.0))
    assert step(0.1) == -1.0
    assert step(0.5) == -1.0
    assert step(0.6) == 0.0
    assert step(0.8) == 0.0
    assert step(0.81) == 2.0


def test_probability_is_the_logistic_of_the_summed_steps() -> None:
    model = AdditiveModel.from_dict(
        {"intercept": 0.5, "steps": {"x": {"cuts": [0.0], "values": [-1.0, 1.0]}}},
        ["x", "y"],  # "y" absent from the file: contributes nothing
    )
    assert model.logit([1.0, 123.0]) == 1.5
    assert math.isclose(model.probability([1.0, 0.0]), 1 / (1 + math.exp(-1.5)))
    assert 0.0 < model.probability([-1.0, 0.0]) < 0.5
    assert model.probability([1.0, 0.0]) == model.probability([1.0, 0.0])


def test_extreme_logits_do_not_overflow() -> None:
    model = AdditiveModel(("x",), 0.0, (StepFunction((0.0,), (-1000.0, 1000.0)),))
    assert model.probability([-1.0]) == 0.0
    assert model.probability([1.0]) == 1.0


@pytest.mark.parametrize(
    "data",
    [
        {"steps": {}},
        {"intercept": 0.0, "steps": {"unknown": {"cuts": [], "values": [0.0]}}},
        {"intercept": 0.0, "steps": {"x": {"cuts": [0.1], "values": [0.0]}}},
        {"intercept": 0.0, "steps": {"x": {"cuts": [0.2, 0.1], "values": [0.0, 1.0, 2.0]}}},
        {"intercept": 0.0, "steps": {"x": {"cuts": [], "values": ["nan"]}}},
    ],
)
def test_invalid_models_are_refused(data: dict[str, object]) -> None:
    with pytest.raises(ReviewerModelFormatError):
        AdditiveModel.from_dict(data, ["x"])


def test_round_trip() -> None:
    model = AdditiveModel(("x",), 0.25, (StepFunction((0.3,), (0.0, 1.0)),))
    assert AdditiveModel.from_dict(model.to_dict(), ["x"]) == model
