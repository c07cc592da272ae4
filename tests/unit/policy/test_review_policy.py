"""`semantic_cache.review`: the model reviewer's band and the tenants' token budget."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.policy.models import Policy, ReviewPolicy


def test_defaults() -> None:
    review = ReviewPolicy()
    assert review.enabled and review.show_stored_answer
    assert review.timeout_seconds == 2.0
    assert review.band_floor == 0.80  # calibrated: below the 0.97 default threshold
    assert review.tokens_per_tenant_per_hour == 200_000


def test_a_policy_file_sets_them() -> None:
    policy = Policy.model_validate(
        {
            "semantic_cache": {
                "review": {"band_floor": 0.9, "tokens_per_tenant_per_hour": None},
            }
        }
    )
    review = policy.semantic_cache.review
    assert (review.band_floor, review.tokens_per_tenant_per_hour) == (0.9, None)  # unbounded
    assert ReviewPolicy(tokens_per_tenant_per_hour=0).tokens_per_tenant_per_hour == 0


@pytest.mark.parametrize(
    "bad",
    [
        {"band_floor": 0},
        {"band_floor": 1.2},
        {"tokens_per_tenant_per_hour": -1},
        {"tokens_per_tenant_per_hour": "lots"},
    ],
)
def test_bad_values_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ReviewPolicy.model_validate(bad)
