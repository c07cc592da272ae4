"""One vocabulary for the non-cacheable classes, and one registry of their checks."""

from __future__ import annotations

from gateway.classify.checks import CHECKS
from gateway.classify.classes import NonCacheableClass
from gateway.classify.classifier import CHECK_ORDER
from gateway.pipeline.reasons import Reason
from gateway.policy.models import NON_CACHEABLE_CLASSES


def test_policy_and_reasons_use_the_class_values() -> None:
    assert tuple(cls.value for cls in NonCacheableClass) == NON_CACHEABLE_CLASSES
    assert NON_CACHEABLE_CLASSES == (
        "write_intent",
        "time_sensitive",
        "entity_id",
        "unresolved_followup",
        "personalized",
    )
    for cls in NonCacheableClass:
        assert Reason(cls.value).value == cls.value


def test_every_class_has_checks_and_a_place_in_the_order() -> None:
    assert set(CHECKS) == set(NonCacheableClass)
    assert all(CHECKS[cls] for cls in NonCacheableClass)
    assert sorted(CHECK_ORDER) == sorted(NonCacheableClass)
