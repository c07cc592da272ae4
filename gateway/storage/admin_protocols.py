"""The protocols of the operator side's stores: keys issued at run time (`/admin/keys`),
the audit trail of admin actions and the spend records behind budgets. Beside
`protocols.py` (the request path's stores), with the same failure contract: a backend's
errors come out as `StoreUnavailable`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gateway.audit_trail.records import AuditEntry
from gateway.keys.records import RuntimeKey
from gateway.spend.records import SpendRow


class KeyStore(Protocol):
    """Runtime API keys by id and by the SHA-256 of their secret. Every write bumps
    `version()`, which each process polls to forget what it remembered."""

    async def add(self, key: RuntimeKey) -> None: ...

    async def get(self, key_id: str) -> RuntimeKey | None: ...

    async def find(self, digest_hex: str) -> RuntimeKey | None: ...

    async def list(self, tenant: str | None) -> list[RuntimeKey]:
        """Oldest first; every tenant's when `tenant` is None."""
        ...

    async def revoke(self, key_id: str, at: float) -> RuntimeKey | None:
        """The key stops working at `at` (or earlier, if it already would); the updated
        key, or None when there is no such key."""
        ...

    async def rotate(self, key_id: str, new_key: RuntimeKey, old_stops_at: float) -> bool:
        """Adds `new_key` and stops `key_id` at `old_stops_at`, both or neither; False
        when there is no key `key_id`."""
        ...

    async def version(self) -> int: ...


class AuditStore(Protocol):
    """The audit trail, capped by count and age on every append."""

    async def append(self, entry: AuditEntry, max_entries: int, min_at: float) -> None: ...

    async def recent(self, limit: int, action: str | None) -> list[AuditEntry]:
        """Newest first."""
        ...


# Spend per (UTC day, tenant, key, model): embedded SQLite, or Redis shared by replicas.


class SpendStore(Protocol):
    async def add(self, rows: Sequence[SpendRow]) -> None:
        """Add each row's columns to the stored row of its identity. All or nothing."""
        ...

    async def tenant_spent(
        self, tenant: str, days: Sequence[str], key: str | None = None
    ) -> dict[str, float]:
        """`spent_usd` of `tenant` (of one `key` of it) on each of `days` (0.0 where
        nothing was spent)."""
        ...

    async def rows(self, days: Sequence[str], tenant: str | None = None) -> list[SpendRow]:
        """The stored rows of `days` (of one tenant, or of all)."""
        ...

    async def close(self) -> None: ...
