"""`audit`: how long the audit trail of admin actions is kept."""

from __future__ import annotations

from pydantic import Field

from gateway.strict_model import StrictModel


class AuditTrailSettings(StrictModel):
    # Entries beyond the newest `max_entries`, and entries older than `max_age_days`,
    # are dropped when new ones are written.
    max_entries: int = Field(default=10_000, ge=1, le=10_000_000)
    max_age_days: float = Field(default=90.0, gt=0, le=3650)
