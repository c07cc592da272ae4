"""Records admin actions: one structured log line each, and an entry in the backend's
capped audit store (`GET /admin/audit` reads it back, newest first)."""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

from gateway.audit_trail.records import AuditEntry, Outcome
from gateway.audit_trail.settings import AuditTrailSettings
from gateway.storage.admin_protocols import AuditStore
from gateway.storage.protocols import StoreUnavailable

logger = logging.getLogger("gateway.audit")

_SECONDS_PER_DAY = 86_400


class AuditTrail:
    def __init__(
        self,
        store: AuditStore,
        settings: AuditTrailSettings,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock
        self.store_failures = 0

    async def record(
        self,
        action: str,
        actor: str,
        outcome: Outcome,
        *,
        client: str | None = None,
        tenant: str | None = None,
        target: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> AuditEntry:
        """Callers pass ids, tenant names and counts only: never a secret or prompt text."""
        entry = AuditEntry(
            entry_id="aud_" + secrets.token_hex(8),
            at=self._clock(),
            action=action,
            actor=actor,
            outcome=outcome,
            client=client,
            tenant=tenant,
            target=target,
            details=details or {},
        )
        # The log line goes out first: if the store is down the action is still on record.
        logger.info("audit %s", json.dumps(entry.to_api(), sort_keys=True))
        min_at = entry.at - self._settings.max_age_days * _SECONDS_PER_DAY
        try:
            await self._store.append(entry, self._settings.max_entries, min_at)
        except StoreUnavailable:
            self.store_failures += 1
            logger.warning("audit entry %s was logged but not stored", entry.entry_id)
        return entry

    async def recent(self, limit: int, action: str | None = None) -> list[AuditEntry]:
        return await self._store.recent(limit, action)
