"""What the semantic stage asks of the adaptive statistics on the request path: the
serving threshold (in `adapt`), and the traffic of served hits. Both only read or add
to the in-process view: no store round trip."""

from __future__ import annotations

from gateway.adaptive.stats import AdaptiveStats, Scope, scopes_of
from gateway.adaptive.threshold import OperatingPoint
from gateway.policy.models import SemanticCachePolicy


class AdaptiveServing:
    def __init__(self, stats: AdaptiveStats) -> None:
        self.stats = stats

    def operating_point(
        self, tenant: str, language: str, model: str, policy: SemanticCachePolicy
    ) -> tuple[Scope, OperatingPoint]:
        adaptive = policy.adaptive
        scope = self.stats.deciding_scope(
            scopes_of(tenant, language, model), adaptive.min_scope_verdicts
        )
        point = self.stats.operating_point(
            scope, policy.target_precision, policy.accept_threshold, adaptive.floor
        )
        return scope, point

    def serving_threshold(
        self, tenant: str, language: str, model: str, policy: SemanticCachePolicy
    ) -> float | None:
        """The threshold to serve at; None: the policy's own `accept_threshold`."""
        if policy.adaptive.mode != "adapt":
            return None
        threshold = self.operating_point(tenant, language, model, policy)[1].threshold
        # Never stricter than the static default, never looser than the floor.
        return min(policy.accept_threshold, max(policy.adaptive.floor, threshold))

    def served(
        self, tenant: str, language: str, model: str, similarity: float, policy: SemanticCachePolicy
    ) -> None:
        if policy.adaptive.mode != "off":
            self.stats.add_traffic(scopes_of(tenant, language, model), similarity)

    def audit_verdict(
        self, tenant: str, language: str, model: str, similarity: float, agrees: bool
    ) -> None:
        """A served semantic hit re-asked upstream: its verdict counts at once (a false
        hit tightens the threshold before the next request)."""
        scopes = scopes_of(tenant, language, model)
        self.stats.add_verdict(scopes, similarity, 1.0 if agrees else 0.0)
        self.stats.add_tally(scopes, "audit_verdicts", 1.0)
        self.stats.add_tally(scopes, "audit_false", 0.0 if agrees else 1.0)
