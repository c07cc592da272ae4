"""`semantic_cache.target_precision`: the thresholds follow from it unless set."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.policy.models import DEFAULT_TARGET_PRECISION, Policy, SemanticCachePolicy


def test_thresholds_follow_the_target_precision() -> None:
    default = SemanticCachePolicy()
    assert default.target_precision == DEFAULT_TARGET_PRECISION == 0.97
    # No review band by default: serve at the target, refuse below.
    assert default.accept_threshold == default.review_min_similarity == 0.97
    stricter = SemanticCachePolicy(target_precision=0.99)
    assert (stricter.accept_threshold, stricter.review_min_similarity) == (0.99, 0.99)


def test_a_review_band_is_opened_by_a_lower_review_min_similarity() -> None:
    band = SemanticCachePolicy(target_precision=0.95, review_min_similarity=0.9)
    assert (band.accept_threshold, band.review_min_similarity) == (0.95, 0.9)


def test_old_policy_files_with_explicit_thresholds_stay_valid() -> None:
    old = SemanticCachePolicy(accept_threshold=0.92, review_min_similarity=0.85)
    assert (old.accept_threshold, old.review_min_similarity) == (0.92, 0.85)
    only_accept = SemanticCachePolicy(accept_threshold=0.9)
    assert only_accept.review_min_similarity == 0.9


def test_target_and_a_different_accept_threshold_conflict() -> None:
    with pytest.raises(ValidationError, match="set target_precision or accept_threshold"):
        SemanticCachePolicy(target_precision=0.95, accept_threshold=0.9)
    # The same number twice (e.g. a dumped policy read back) is not a conflict.
    dumped = SemanticCachePolicy(target_precision=0.95).model_dump()
    assert SemanticCachePolicy.model_validate(dumped).accept_threshold == 0.95


def test_a_band_above_the_target_is_an_error_that_names_it() -> None:
    with pytest.raises(ValidationError, match="= target_precision unless set"):
        SemanticCachePolicy(target_precision=0.9, review_min_similarity=0.95)


def test_a_quoted_target_derives_what_pydantic_reads() -> None:
    quoted = SemanticCachePolicy.model_validate({"target_precision": "0.9"})
    assert (quoted.target_precision, quoted.accept_threshold) == (0.9, 0.9)


@pytest.mark.parametrize("target", [0.5, 1.01, "high", None])
def test_a_bad_target_fails_alone(target: object) -> None:
    with pytest.raises(ValidationError) as error:
        Policy.model_validate({"semantic_cache": {"target_precision": target}})
    fields = {".".join(str(p) for p in e["loc"]) for e in error.value.errors()}
    assert fields == {"semantic_cache.target_precision"}
