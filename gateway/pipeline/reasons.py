"""Cache layers and the reason codes that explain each decision (a stable vocabulary:
they appear in `x-gateway-cache-reason`, decision records and metrics)."""

from __future__ import annotations

from enum import StrEnum


class Layer(StrEnum):
    EXACT = "exact"
    SEMANTIC = "semantic"
    MISS = "miss"
    BYPASS = "bypass"


class Reason(StrEnum):
    # misses
    NOT_FOUND = "not_found"  # no stored answer matched
    CLIENT_NO_CACHE = "client_no_cache"  # Cache-Control: no-cache, lookup skipped
    STORE_UNAVAILABLE = "store_unavailable"  # the cache store failed; failed open
    # bypasses (never looked up, never stored)
    POLICY_DISABLED = "policy_disabled"
