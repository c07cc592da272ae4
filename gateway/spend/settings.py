"""The gateway config's `spend:` block (README, "Spend and budgets")."""

from __future__ import annotations

from pydantic import Field

from gateway.strict_model import StrictModel


class SpendSettings(StrictModel):
    # How often this process writes its recorded spend to the store (a batch per
    # interval; a failed write is kept and retried, and the rest on shutdown).
    flush_seconds: float = Field(default=1.0, gt=0, le=60)
    # Redis: how long a replica trusts the tenant's spend it last read before reading
    # again (what other replicas spent shows up within this, plus their flush interval).
    # The embedded backend has one process and reads its totals once.
    budget_refresh_seconds: float = Field(default=1.0, gt=0, le=300)
