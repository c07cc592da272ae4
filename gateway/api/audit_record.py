"""`audit()`: how admin routes add to the audit trail; the "who" is the admin key's id
(a runtime key) or `sha256:` and a digest prefix (a config key), never the key."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from gateway.audit_trail.records import AuditEntry, Outcome
from gateway.auth import Principal
from gateway.wiring import Services

# The actor of an unguarded (open, no admin keys) gateway's admin calls.
OPEN_ACTOR = "open"


def _actor(request: Request) -> str:
    principal: Principal | None = getattr(request.state, "admin_principal", None)
    if principal is None or principal.key_id is None:
        return OPEN_ACTOR
    return principal.key_id


async def audit(
    request: Request,
    services: Services,
    action: str,
    outcome: Outcome,
    **fields: Any,
) -> AuditEntry:
    """Record `action` by the admin who sent `request` (`fields`: tenant, target,
    details: ids and counts only)."""
    client = request.client.host if request.client is not None else None
    return await services.audit_trail.record(
        action, _actor(request), outcome, client=client, **fields
    )
