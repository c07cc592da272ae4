"""One entry of the audit trail: who did what to which target, when, from where, and
how it ended. Never a secret, never prompt text: targets are ids and tenant names."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

Outcome = Literal["ok", "not_found", "failed", "rejected"]


@dataclass(frozen=True, slots=True)
class AuditEntry:
    entry_id: str
    at: float  # wall-clock seconds
    action: str  # e.g. `key.create`, `key.revoke`, `cache.purge`, `policies.reload`
    actor: str  # the admin key's id or digest prefix, never the key
    outcome: Outcome
    client: str | None = None  # the client's address
    tenant: str | None = None
    target: str | None = None  # the id acted on (a key id, a memory id)
    details: dict[str, Any] = field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        body = asdict(self)
        body["id"] = body.pop("entry_id")
        body["at"] = datetime.fromtimestamp(self.at, UTC).isoformat().replace("+00:00", "Z")
        body["object"] = "audit_entry"
        return body


def entry_to_json(entry: AuditEntry) -> bytes:
    return json.dumps(asdict(entry), separators=(",", ":"), sort_keys=True).encode()


def entry_from_json(raw: bytes | str) -> AuditEntry:
    return AuditEntry(**json.loads(raw))
