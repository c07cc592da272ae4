"""What a spend row names the API key by. One function, so that switching to a key id
(once keys carry one) changes one line."""

from __future__ import annotations

from gateway.auth import Principal

# A gateway running open (no tenants configured) has no keys.
NO_KEY = "-"


def spend_key_of(principal: Principal) -> str:
    """The first 12 hex digits of the SHA-256 of the key (never the key itself)."""
    return principal.key_digest_prefix or NO_KEY
