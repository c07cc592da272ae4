"""Issuing, listing, rotating and revoking runtime keys (the admin API's work).

A secret is made with `secrets` (256 bits), shown once to the caller and stored only as
its SHA-256. Every change makes this process forget what it remembered at once; the
other replicas notice the store's version counter within their check interval.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from gateway.auth import key_digest
from gateway.keys.cache import RuntimeKeyCache
from gateway.keys.records import SECRET_PREFIX, SHOWN_PREFIX_CHARS, RuntimeKey
from gateway.storage.admin_protocols import KeyStore


@dataclass(frozen=True, slots=True)
class IssuedKey:
    key: RuntimeKey
    secret: str  # shown once, in the response to the create or rotate


@dataclass(frozen=True, slots=True)
class KeyRequest:
    tenant: str
    label: str | None = None
    expires_at: float | None = None
    allowed_models: tuple[str, ...] | None = None
    user: str | None = None


class KeyAlreadyStopped(Exception):
    """A rotation of a key that no longer works."""


def _new_secret() -> tuple[str, str]:
    """(secret, SHA-256 hex of it)."""
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    return secret, key_digest(secret).hex()


class KeyAdmin:
    def __init__(
        self, store: KeyStore, cache: RuntimeKeyCache, clock: Callable[[], float] = time.time
    ) -> None:
        self._store = store
        self._cache = cache
        self._clock = clock

    async def create(self, request: KeyRequest) -> IssuedKey:
        secret, digest_hex = _new_secret()
        key = RuntimeKey(
            key_id="key_" + secrets.token_hex(8),
            tenant=request.tenant,
            digest_hex=digest_hex,
            prefix=secret[:SHOWN_PREFIX_CHARS],
            created_at=self._clock(),
            label=request.label,
            expires_at=request.expires_at,
            allowed_models=request.allowed_models,
            user=request.user,
        )
        try:
            await self._store.add(key)
        finally:
            self._cache.forget_all()  # an unknown digest remembered before now is known
        return IssuedKey(key, secret)

    async def list(self, tenant: str | None) -> list[RuntimeKey]:
        return await self._store.list(tenant)

    async def get(self, key_id: str) -> RuntimeKey | None:
        return await self._store.get(key_id)

    async def revoke(self, key_id: str) -> RuntimeKey | None:
        try:
            return await self._store.revoke(key_id, self._clock())
        finally:
            self._cache.forget_all()

    async def rotate(self, key_id: str, grace_seconds: float) -> IssuedKey | None:
        """A new secret for the key's tenant, label, limits and user; the old secret stops
        after `grace_seconds` (0: now). None when there is no such key."""
        old = await self._store.get(key_id)
        if old is None:
            return None
        now = self._clock()
        if old.refusal(now) is not None:
            raise KeyAlreadyStopped(key_id)
        secret, digest_hex = _new_secret()
        new = replace(
            old,
            key_id="key_" + secrets.token_hex(8),
            digest_hex=digest_hex,
            prefix=secret[:SHOWN_PREFIX_CHARS],
            created_at=now,
            revoked_at=None,
            rotated_from=old.key_id,
        )
        try:
            rotated = await self._store.rotate(key_id, new, now + grace_seconds)
        finally:
            self._cache.forget_all()
        return IssuedKey(new, secret) if rotated else None
