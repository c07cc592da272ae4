"""Stage 1: decide whether the request may use the cache at all.

Request-level rules first (policy switched caching off, sampling too hot, several
choices asked for), then the content classifier (writes, time-sensitive, IDs, follow-ups,
personal data). A bypassed request goes to the provider untouched and is never stored.
"""

from __future__ import annotations

from gateway.classify.classifier import (
    ClassifierSettings,
    NonCacheableClass,
    RequestClassifier,
)
from gateway.pipeline.reasons import Reason
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.values import CACHEABLE, Verdict
from gateway.policy.models import ClassifierPolicy


def classifier_settings(policy: ClassifierPolicy) -> ClassifierSettings:
    return ClassifierSettings(
        enabled=frozenset(NonCacheableClass(name) for name in policy.enabled_classes),
        extra_patterns={
            NonCacheableClass(name): tuple(patterns)
            for name, patterns in policy.extra_patterns.items()
        },
        write_model=policy.write_intent_model,
    )


class ClassifyStage:
    def __init__(self, classifier: RequestClassifier | None) -> None:
        self._classifier = classifier

    def run(self, request: ChatRequest) -> Verdict:
        """Whether caching may apply to this request, and if not, why."""
        policy = request.policy
        if not policy.exact_cache.enabled and not policy.semantic_cache.enabled:
            return Verdict(Reason.POLICY_DISABLED)
        rules = policy.classifier
        temperature = request.body.get("temperature")
        if (
            rules.temperature_cap is not None
            and isinstance(temperature, int | float)
            and temperature > rules.temperature_cap
        ):
            return Verdict(Reason.TEMPERATURE_ABOVE_CAP)
        choices = request.body.get("n")
        if isinstance(choices, int) and choices > 1 and not rules.cache_multiple_choices:
            return Verdict(Reason.N_GT_1)
        if self._classifier is None or not rules.enabled_classes:
            return CACHEABLE
        # A turn that carries material (a pasted policy, an email, code) is judged by
        # its ask: "To start a return, open Order History" inside a document is not the
        # user asking to act, and the material itself must match exactly to be reused.
        turn = request.turn
        verdict = self._classifier.classify(
            request.messages,
            request.body.get("tools"),
            request.body.get("tool_choice"),
            classifier_settings(rules),
            text=turn.ask if turn.material else None,
        )
        if verdict.reason is None:
            return CACHEABLE
        return Verdict(Reason(verdict.reason.value), verdict.rule)
