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
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gateway.errors import StoreUnavailableResponse, Unauthorized
from gateway.keys.records import RuntimeKey
from gateway.settings import ADMIN_TENANT, HASHED_KEY_PREFIX, OPEN_TENANT, AuthSettings
from gateway.storage.protocols import StoreUnavailable

if TYPE_CHECKING:
    from gateway.keys.cache import RuntimeKeyCache

__all__ = [
    "ADMIN_TENANT",
    "KEY_HEADERS",
    "OPEN_TENANT",
    "KeyRegistry",
    "Principal",
    "configured_digest",
    "hashed_key",
    "key_digest",
    "runtime_principal",
]


# Headers besides `Authorization` that may carry the key, in the order they are read.
KEY_HEADERS = ("x-api-key", "api-key")
# Hex digits of a key's SHA-256 that name it in records (48 bits: no collision among a
# tenant's keys in practice, and nothing that helps to find the key).
KEY_PREFIX_DIGITS = 12


@dataclass(frozen=True, slots=True)
class Principal:
    tenant: str
    is_admin: bool = False
    # Who presented the request, for the audit trail: a runtime key's id, or for a
    # config key `sha256:` and the first 12 hex digits of its digest (never the key).
    # Not compared: two config keys of one tenant are the same principal.
    key_id: str | None = field(default=None, compare=False)
    # A runtime key's limits: the models it may name (None: all) and the one user it
    # speaks for (None: any user the request names).
    allowed_models: frozenset[str] | None = None
    bound_user: str | None = None

    def may_use(self, model: str) -> bool:
        return self.allowed_models is None or model in self.allowed_models


def key_digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def configured_digest(entry: str) -> bytes:
    """A config key entry: plain text, or already hashed as `sha256:<hex>`."""
    if entry.startswith(HASHED_KEY_PREFIX):
        return bytes.fromhex(entry.removeprefix(HASHED_KEY_PREFIX))
    return key_digest(entry)


def hashed_key(key: str) -> str:
    """What to put in the config instead of `key` (`gateway key hash`)."""
    return HASHED_KEY_PREFIX + key_digest(key).hex()


class KeyRegistry:
    """Resolves the `Authorization` header to a principal.

    With no tenants configured the gateway runs open: every chat request is tenant
    `default`. Admin keys always authenticate as admin when presented.
    """

    def __init__(self, settings: AuthSettings, runtime: RuntimeKeyCache | None = None) -> None:
        self._by_digest: dict[bytes, Principal] = {}
        for tenant in settings.tenants:
            for key in tenant.api_keys:
                digest = configured_digest(key)
                self._by_digest[digest] = Principal(tenant=tenant.name, key_id=_ref(digest))
        for key in settings.admin_keys:
            digest = configured_digest(key)
            self._by_digest[digest] = Principal(
                tenant=ADMIN_TENANT, is_admin=True, key_id=_ref(digest)
            )
        self.open = not settings.tenants and not settings.require_keys
        self.runtime = runtime

    def authenticate(self, authorization: str | None, *api_key_headers: str | None) -> Principal:
        """The principal for the key in `authorization` (a Bearer header) or, when it
        carries none, in the first of `api_key_headers` (raw key values) present: the
        config's keys only (`resolve` also knows the runtime keys)."""
        key = _presented_key(authorization, api_key_headers)
        if key is not None:
            principal = self._by_digest.get(key_digest(key))
            if principal is not None:
                return principal
        return self._fallback(key)

    async def resolve(self, authorization: str | None, *api_key_headers: str | None) -> Principal:
        """`authenticate`, then the keys issued at run time: the config's keys are
        checked first, in memory; a runtime key is one dict lookup once remembered."""
        key = _presented_key(authorization, api_key_headers)
        if key is not None:
            digest = key_digest(key)
            principal = self._by_digest.get(digest)
            if principal is not None:
                return principal
            if self.runtime is not None:
                runtime = await self._runtime_principal(self.runtime, digest.hex())
                if runtime is not None:
                    return runtime
        return self._fallback(key)

    async def _runtime_principal(self, cache: RuntimeKeyCache, digest_hex: str) -> Principal | None:
        try:
            found = await cache.lookup(digest_hex)
        except StoreUnavailable:
            raise StoreUnavailableResponse("The key store is unavailable; retry shortly.") from None
        if found is None:
            return None
        refusal = found.refusal(time.time())
        if refusal == "expired":
            raise Unauthorized("The API key has expired.", code="expired_api_key")
        if refusal is not None:
            raise Unauthorized("Invalid API key.")
        return runtime_principal(found)

    def _fallback(self, key: str | None) -> Principal:
        if self.open:
            return Principal(tenant=OPEN_TENANT)
        if key is None:
            raise Unauthorized(
                "Missing API key. Send it as 'Authorization: Bearer <key>' or 'x-api-key: <key>'.",
                code="missing_api_key",
            )
        raise Unauthorized("Invalid API key.")


def _ref(digest: bytes) -> str:
    return HASHED_KEY_PREFIX + digest.hex()[:12]


def runtime_principal(key: RuntimeKey) -> Principal:
    models = None if key.allowed_models is None else frozenset(key.allowed_models)
    return Principal(
        tenant=key.tenant, key_id=key.key_id, allowed_models=models, bound_user=key.user
    )


def _presented_key(
    authorization: str | None, api_key_headers: tuple[str | None, ...]
) -> str | None:
    key = _bearer_token(authorization)
    if key is None:
        key = next((value.strip() for value in api_key_headers if value and value.strip()), None)
    return key


def _bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token
