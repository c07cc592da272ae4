"""A key issued at run time: what is stored (never the secret, only its SHA-256) and
what the admin API shows of it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

# Every issued secret starts with this, so a leaked one is recognisable in a scan.
SECRET_PREFIX = "sk-gw-"  # noqa: S105 (a marker, not a secret)
# How many characters of the secret the listing shows (`sk-gw-ab12…`).
SHOWN_PREFIX_CHARS = len(SECRET_PREFIX) + 4


@dataclass(frozen=True, slots=True)
class RuntimeKey:
    key_id: str
    tenant: str
    digest_hex: str  # SHA-256 of the secret
    prefix: str  # the secret's first characters, for people to tell keys apart
    created_at: float
    label: str | None = None
    expires_at: float | None = None
    # When the key stops working: at revocation, or at the end of a rotation's grace.
    revoked_at: float | None = None
    allowed_models: tuple[str, ...] | None = None  # None: every model
    user: str | None = None  # bound: the key speaks for this user only
    rotated_from: str | None = None

    def refusal(self, now: float) -> str | None:
        """Why the key does not authenticate at `now` (`expired`, `revoked`), or None."""
        if self.revoked_at is not None and now >= self.revoked_at:
            return "revoked"
        if self.expires_at is not None and now >= self.expires_at:
            return "expired"
        return None

    def to_api(self) -> dict[str, Any]:
        """The listing's view: no secret, no digest."""
        return {
            "id": self.key_id,
            "object": "api_key",
            "tenant": self.tenant,
            "label": self.label,
            "prefix": self.prefix + "…",
            "created_at": _iso(self.created_at),
            "expires_at": _iso(self.expires_at),
            "revoked_at": _iso(self.revoked_at),
            "allowed_models": None if self.allowed_models is None else list(self.allowed_models),
            "user": self.user,
            "rotated_from": self.rotated_from,
        }


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")


def key_to_json(key: RuntimeKey) -> bytes:
    return json.dumps(asdict(key), separators=(",", ":")).encode()


def key_from_json(raw: bytes | str) -> RuntimeKey:
    data = json.loads(raw)
    models = data.get("allowed_models")
    data["allowed_models"] = None if models is None else tuple(models)
    return RuntimeKey(**data)
