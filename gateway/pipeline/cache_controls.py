"""The request's own cache controls, bounded by its policy: how old an entry it accepts
(`Cache-Control: max-age`) and how long its answer's entries live
(`x-gateway-cache-ttl`)."""

from __future__ import annotations

from gateway.pipeline.context import ChatContext


def older_than_max_age(ctx: ChatContext, created_at: float, now: float) -> bool:
    """Whether an entry stored at `created_at` is too old for this request."""
    max_age = ctx.cache_control.max_age_seconds
    if max_age is None or not ctx.policy.cache_control.honour_max_age:
        return False
    return now - created_at > max_age


def entry_ttl_seconds(ctx: ChatContext, layer_ttl_seconds: int) -> int:
    """How long this answer's entry lives in a layer whose policy TTL is
    `layer_ttl_seconds`: the request's TTL when it sets one, never past the policy's
    bound (`cache_control.max_ttl_seconds`, else the layer's own TTL)."""
    requested = ctx.cache_control.ttl_seconds
    policy = ctx.policy.cache_control
    if requested is None or not policy.honour_ttl_header:
        return layer_ttl_seconds
    return min(requested, policy.max_ttl_seconds or layer_ttl_seconds)
