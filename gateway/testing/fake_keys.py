"""An in-memory `KeyStore` for unit tests: counts its reads, can be made to fail."""

from __future__ import annotations

from dataclasses import replace

from gateway.keys.records import RuntimeKey
from gateway.storage.protocols import StoreUnavailable


class InMemoryKeyStore:
    def __init__(self) -> None:
        self.keys: dict[str, RuntimeKey] = {}
        self.finds = 0
        self.version_reads = 0
        self.failing = False
        self._version = 0

    def _check(self) -> None:
        if self.failing:
            raise StoreUnavailable("keys: down")

    async def add(self, key: RuntimeKey) -> None:
        self._check()
        self.keys[key.key_id] = key
        self._version += 1

    async def get(self, key_id: str) -> RuntimeKey | None:
        self._check()
        return self.keys.get(key_id)

    async def find(self, digest_hex: str) -> RuntimeKey | None:
        self._check()
        self.finds += 1
        return next((k for k in self.keys.values() if k.digest_hex == digest_hex), None)

    async def list(self, tenant: str | None) -> list[RuntimeKey]:
        self._check()
        return [k for k in self.keys.values() if tenant is None or k.tenant == tenant]

    async def revoke(self, key_id: str, at: float) -> RuntimeKey | None:
        self._check()
        key = self.keys.get(key_id)
        if key is None:
            return None
        stop = at if key.revoked_at is None else min(at, key.revoked_at)
        self.keys[key_id] = replace(key, revoked_at=stop)
        self._version += 1
        return self.keys[key_id]

    async def rotate(self, key_id: str, new_key: RuntimeKey, old_stops_at: float) -> bool:
        if await self.revoke(key_id, old_stops_at) is None:
            return False
        await self.add(new_key)
        return True

    async def version(self) -> int:
        self._check()
        self.version_reads += 1
        return self._version

    def change_elsewhere(self, key_id: str, at: float) -> None:
        """A revocation made by another replica: the version moves, nobody is told."""
        key = self.keys[key_id]
        self.keys[key_id] = replace(key, revoked_at=at)
        self._version += 1
