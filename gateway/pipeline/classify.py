"""Stage 1: decide whether the request may use the cache at all.

This module holds the request-level rules; the content classifier (write intent, time
sensitivity, IDs, follow-ups, personal data) plugs in here.
"""

from __future__ import annotations

from gateway.pipeline.context import ChatContext
from gateway.pipeline.reasons import Layer, Reason


def classify_request(ctx: ChatContext) -> None:
    """Marks the context `bypass` with a reason when caching must not apply."""
    if not ctx.policy.exact_cache.enabled:
        ctx.decide(Layer.BYPASS, Reason.POLICY_DISABLED)
