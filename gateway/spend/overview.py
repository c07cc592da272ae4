"""The spend section of `/admin/stats` (and the dashboard): the last `STATS_DAYS` UTC
days per tenant, model and day, and today's totals, from the (shared) store."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from gateway.spend.periods import days_between, utc_date
from gateway.spend.report import by_tenant_model_day, totals
from gateway.spend.tracker import SpendTracker
from gateway.storage.protocols import StoreUnavailable

STATS_DAYS = 7


async def spend_overview(spend: SpendTracker) -> dict[str, Any]:
    today = utc_date(time.time())
    days = days_between(today - timedelta(days=STATS_DAYS - 1), today)
    try:
        await spend.ledger.flush()
        rows = await spend.ledger.store.rows(days)
    except StoreUnavailable:
        return {"available": False, "days": STATS_DAYS, "today": totals([]), "rows": []}
    return {
        "available": True,
        "days": STATS_DAYS,
        "today": totals(row for row in rows if row.day == days[-1]),
        "rows": by_tenant_model_day(rows),
    }
