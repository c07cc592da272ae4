"""The adaptive policy: defaults, the mode shorthand, a model judge needs its model."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.policy.models import Policy, SemanticCachePolicy


def test_defaults_observe_with_the_local_judge() -> None:
    adaptive = Policy().semantic_cache.adaptive
    assert (adaptive.mode, adaptive.judge, adaptive.floor) == ("observe", "local", 0.80)


def test_the_mode_alone_is_a_shorthand() -> None:
    policy = SemanticCachePolicy.model_validate({"adaptive": "adapt"})
    assert policy.adaptive.mode == "adapt"


@pytest.mark.parametrize(
    "adaptive",
    [{"mode": "sometimes"}, {"judge": "model"}, {"floor": 0.3}, {"sample_rate": 2}, "on"],
)
def test_bad_settings_are_refused(adaptive: object) -> None:
    with pytest.raises(ValidationError):
        SemanticCachePolicy.model_validate({"adaptive": adaptive})
