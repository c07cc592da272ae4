"""The budget check before a request reaches the provider.

A tenant whose spend in the current UTC day (or month) has reached its cap is refused
with `BudgetExceeded` (402); past `soft_threshold` of a cap the request goes on with a
warning (header, metric, one log line per tenant and period). The check reads the
spend recorded so far (`SpendLedger.tenant_spent`), so a tenant is stopped at the first
request after its spend reaches the cap: the overshoot is at most the cost of the
requests already in flight. Cache hits never come here: they cost nothing and are
served past the budget.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway.policy.budget import BudgetPolicy
from gateway.spend.errors import BudgetExceeded
from gateway.spend.ledger import SpendLedger
from gateway.spend.periods import month_days_so_far, utc_day, utc_month

logger = logging.getLogger(__name__)

REMAINING_HEADER = "x-gateway-budget-remaining-usd"
WARNING_HEADER = "x-gateway-budget-warning"

# (tenant, period) -> None: counts a soft crossing, or a refusal (the metrics)
PeriodHook = Callable[[str, str], None]


def _ignore(tenant: str, period: str) -> None:
    return None


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """What a forwarded request's response says about its tenant's budget."""

    remaining_usd: float  # the least left under any cap, before this request
    warning: str | None = None  # "daily" | "monthly" | "key_daily": past the soft threshold

    def headers(self) -> dict[str, str]:
        headers = {REMAINING_HEADER: f"{max(0.0, self.remaining_usd):.6f}"}
        if self.warning is not None:
            headers[WARNING_HEADER] = self.warning
        return headers


@dataclass(frozen=True, slots=True)
class _Cap:
    period: str  # "daily" | "monthly" | "key_daily"
    period_id: str  # the UTC day or month it is for (and the key, for "key_daily")
    limit_usd: float
    spent_usd: float


class BudgetGuard:
    def __init__(
        self,
        ledger: SpendLedger,
        *,
        on_soft: PeriodHook = _ignore,
        on_exceeded: PeriodHook = _ignore,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._ledger = ledger
        self._on_soft = on_soft
        self._on_exceeded = on_exceeded
        self._clock = clock
        self._warned: set[tuple[str, str, str]] = set()  # (tenant, period, period id)
        self._stopped: set[tuple[str, str, str]] = set()

    async def admit(self, tenant: str, key: str, budget: BudgetPolicy) -> BudgetStatus | None:
        """None: no cap. Raises `BudgetExceeded` when a cap of the tenant or of its API
        `key` is reached."""
        if budget.daily_usd is None and budget.monthly_usd is None and budget.key_daily_usd is None:
            return None
        caps = await self._caps(tenant, key, budget)
        for cap in caps:
            if cap.spent_usd >= cap.limit_usd:
                self._once(self._stopped, tenant, cap, self._on_exceeded, "reached")
                raise BudgetExceeded(
                    f"The {_name(cap.period)} ({cap.limit_usd:g} USD) is spent; "
                    f"it renews at the start of the next UTC {_unit(cap.period)}. "
                    "Answers already in the cache are still served.",
                    headers={"x-should-retry": "false", REMAINING_HEADER: "0.000000"},
                )
        warning: str | None = None
        for cap in caps:
            if cap.spent_usd >= cap.limit_usd * budget.soft_threshold:
                warning = warning or cap.period
                self._once(self._warned, tenant, cap, self._on_soft, "past the soft threshold")
        remaining = min(cap.limit_usd - cap.spent_usd for cap in caps)
        return BudgetStatus(remaining_usd=remaining, warning=warning)

    async def _caps(self, tenant: str, key: str, budget: BudgetPolicy) -> list[_Cap]:
        now = self._clock()
        days = month_days_so_far(now)
        caps: list[_Cap] = []
        if budget.daily_usd is not None:
            spent = await self._ledger.tenant_spent(tenant, days[-1:])
            caps.append(_Cap("daily", utc_day(now), budget.daily_usd, spent))
        if budget.monthly_usd is not None:
            spent = await self._ledger.tenant_spent(tenant, days)
            caps.append(_Cap("monthly", utc_month(now), budget.monthly_usd, spent))
        if budget.key_daily_usd is not None:
            spent = await self._ledger.tenant_spent(tenant, days[-1:], key)
            caps.append(_Cap("key_daily", f"{utc_day(now)}/{key}", budget.key_daily_usd, spent))
        return caps

    def _once(
        self,
        seen: set[tuple[str, str, str]],
        tenant: str,
        cap: _Cap,
        hook: PeriodHook,
        what: str,
    ) -> None:
        """Counts and logs the first time per tenant and period (not per request)."""
        mark = (tenant, cap.period, cap.period_id)
        if mark in seen:
            return
        # Earlier periods' marks are done with: the set stays as small as the tenants
        # (and keys) of the current period.
        current = _period_of(cap.period_id)
        seen.difference_update(
            {m for m in seen if m[:2] == mark[:2] and _period_of(m[2]) != current}
        )
        seen.add(mark)
        hook(tenant, cap.period)
        logger.warning(
            "tenant %s %s budget %s: %.6f of %.6f USD (%s)",
            tenant,
            cap.period,
            what,
            cap.spent_usd,
            cap.limit_usd,
            cap.period_id,
        )


def _period_of(period_id: str) -> str:
    return period_id.split("/", 1)[0]  # "2026-12-01/<key>" -> the day


def _unit(period: str) -> str:
    return "month" if period == "monthly" else "day"


def _name(period: str) -> str:
    if period == "key_daily":
        return "daily budget of this API key"
    return f"{period} budget of this tenant"
