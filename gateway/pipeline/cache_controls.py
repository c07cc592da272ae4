"""The request's own cache controls, bounded by its policy: how old an entry it accepts
(`Cache-Control: max-age`) and how long its answer's entries live
(`x-gateway-cache-ttl`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from gateway.policy.models import Policy


@dataclass(frozen=True, slots=True)
class CacheControl:
    """The request's cache controls that the gateway honours: `Cache-Control` directives
    and the `x-gateway-cache-ttl` header (parsed in `gateway/api/cache_headers.py`)."""

    no_cache: bool = False  # skip lookups, still store
    no_store: bool = False  # never store this answer
    # `max-age=N`: serve only an entry at most N seconds old (None: any age)
    max_age_seconds: int | None = None
    # `x-gateway-cache-ttl: N`: this answer's entries expire after N seconds, within
    # the policy's bound (None: the layers' own `ttl_seconds`)
    ttl_seconds: int | None = None

    @classmethod
    def parse(cls, header: str | None, ttl_seconds: int | None = None) -> CacheControl:
        if not header:
            return cls(ttl_seconds=ttl_seconds)
        names: set[str] = set()
        max_ages: list[int] = []
        for part in header.split(","):
            name, _, value = part.strip().partition("=")
            name = name.strip().lower()
            names.add(name)
            value = value.strip().strip('"')
            # delta-seconds (RFC 9111): digits only; anything else is ignored, as an
            # HTTP cache ignores a directive it cannot read. Repeated: the strictest.
            if name == "max-age" and value.isascii() and value.isdigit() and len(value) <= 10:
                max_ages.append(int(value))
        return cls(
            no_cache="no-cache" in names,
            no_store="no-store" in names,
            max_age_seconds=min(max_ages) if max_ages else None,
            ttl_seconds=ttl_seconds,
        )


class _Controlled(Protocol):
    """A request: its cache controls and its policy (`ChatRequest`)."""

    @property
    def cache_control(self) -> CacheControl: ...
    @property
    def policy(self) -> Policy: ...


def older_than_max_age(request: _Controlled, created_at: float, now: float) -> bool:
    """Whether an entry stored at `created_at` is too old for this request."""
    max_age = request.cache_control.max_age_seconds
    if max_age is None or not request.policy.cache_control.honour_max_age:
        return False
    return now - created_at > max_age


def entry_ttl_seconds(request: _Controlled, layer_ttl_seconds: int) -> int:
    """How long this answer's entry lives in a layer whose policy TTL is
    `layer_ttl_seconds`: the request's TTL when it sets one, never past the policy's
    bound (`cache_control.max_ttl_seconds`, else the layer's own TTL)."""
    requested = request.cache_control.ttl_seconds
    policy = request.policy.cache_control
    if requested is None or not policy.honour_ttl_header:
        return layer_ttl_seconds
    return min(requested, policy.max_ttl_seconds or layer_ttl_seconds)
