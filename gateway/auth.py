"""API key -> principal (tenant, admin flag).

The key is read from `Authorization: Bearer <key>` (OpenAI's clients), else `x-api-key`
(Anthropic's) or `api-key` (Azure OpenAI's), on every route: the first of them present
is the key, so a wrong Bearer key is not rescued by another header.

Keys are kept only as SHA-256 digests and looked up by digest, so the lookup time does
not depend on how much of a guessed key matches a real one (what a timing probe could
learn is at most a prefix of the SHA-256 of a real key, which does not help to find the
key), and no plaintext key sits in the gateway's memory after start-up. The config may
give keys already hashed (`sha256:<hex>`, printed by `gateway key hash`), so the key
itself need not be stored anywhere on the gateway's side.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from gateway.errors import Unauthorized
from gateway.settings import ADMIN_TENANT, HASHED_KEY_PREFIX, OPEN_TENANT, AuthSettings

__all__ = [
    "ADMIN_TENANT",
    "KEY_HEADERS",
    "OPEN_TENANT",
    "KeyRegistry",
    "Principal",
    "configured_digest",
    "hashed_key",
]


# Headers besides `Authorization` that may carry the key, in the order they are read.
KEY_HEADERS = ("x-api-key", "api-key")


@dataclass(frozen=True, slots=True)
class Principal:
    tenant: str
    is_admin: bool = False
    # The first hex digits of the key's SHA-256: names the key (its rate limit) without
    # holding it. None for the open tenant.
    key_id: str | None = None


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def configured_digest(entry: str) -> bytes:
    """A config key entry: plain text, or already hashed as `sha256:<hex>`."""
    if entry.startswith(HASHED_KEY_PREFIX):
        return bytes.fromhex(entry.removeprefix(HASHED_KEY_PREFIX))
    return _digest(entry)


def hashed_key(key: str) -> str:
    """What to put in the config instead of `key` (`gateway key hash`)."""
    return HASHED_KEY_PREFIX + _digest(key).hex()


class KeyRegistry:
    """Resolves the `Authorization` header to a principal.

    With no tenants configured the gateway runs open: every chat request is tenant
    `default`. Admin keys always authenticate as admin when presented.
    """

    def __init__(self, settings: AuthSettings) -> None:
        self._by_digest: dict[bytes, Principal] = {}
        for tenant in settings.tenants:
            for key in tenant.api_keys:
                digest = configured_digest(key)
                self._by_digest[digest] = Principal(tenant=tenant.name, key_id=digest.hex()[:16])
        for key in settings.admin_keys:
            self._by_digest[configured_digest(key)] = Principal(tenant=ADMIN_TENANT, is_admin=True)
        self.open = not settings.tenants

    def authenticate(self, authorization: str | None, *api_key_headers: str | None) -> Principal:
        """The principal for the key in `authorization` (a Bearer header) or, when it
        carries none, in the first of `api_key_headers` (raw key values) present."""
        key = _bearer_token(authorization)
        if key is None:
            key = next(
                (value.strip() for value in api_key_headers if value and value.strip()), None
            )
        if key is not None:
            principal = self._by_digest.get(_digest(key))
            if principal is not None:
                return principal
        if self.open:
            return Principal(tenant=OPEN_TENANT)
        if key is None:
            raise Unauthorized(
                "Missing API key. Send it as 'Authorization: Bearer <key>' or 'x-api-key: <key>'.",
                code="missing_api_key",
            )
        raise Unauthorized("Invalid API key.")


def _bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token
