"""What a spend row names the API key by: the principal's key id (a runtime key's id,
or `sha256:` and the first 12 hex digits of a config key's digest; never the key)."""

from __future__ import annotations

from gateway.auth import Principal

# A gateway running open (no tenants configured) has no keys.
NO_KEY = "-"


def spend_key_of(principal: Principal) -> str:
    return principal.key_id or NO_KEY
