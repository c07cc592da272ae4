"""The policy block of spend budgets (`budget:` in a tenant's policy file; README,
"Spend and budgets")."""

from __future__ import annotations

from pydantic import Field

from gateway.strict_model import StrictModel


class BudgetPolicy(StrictModel):
    """A tenant's caps on what its forwarded requests cost per UTC day and month (the
    prices of `gateway/spend/pricing.py`). Read from the tenant's policy (model ""), so
    one budget covers every model. No cap set: spend is recorded, nothing is stopped."""

    daily_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    monthly_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    # Each API key of the tenant on its own, per UTC day (next to the tenant's caps).
    key_daily_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    # The share of a cap past which responses carry `x-gateway-budget-warning`, the
    # metric `gateway_budget_soft_exceeded_total` counts and one log line per period.
    soft_threshold: float = Field(default=0.8, gt=0, le=1)
