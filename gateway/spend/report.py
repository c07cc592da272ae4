"""Spend rows summed for the admin API: per (tenant, day | model | key), and the
per-tenant, model and day view `/admin/stats` and the dashboard show."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from gateway.spend.records import SpendRow

GroupBy = Literal["day", "model", "key"]
GROUPS: tuple[GroupBy, ...] = ("day", "model", "key")
_DIGITS = 10  # USD rounding in answers (well below a token's price)


def grouped(rows: Iterable[SpendRow], group_by: GroupBy) -> list[dict[str, Any]]:
    """One entry per tenant and value of `group_by`, sorted by both."""
    sums: dict[tuple[str, str], SpendRow] = {}
    for row in rows:
        value = getattr(row, group_by)
        known = sums.get((row.tenant, value))
        sums[(row.tenant, value)] = row if known is None else known.plus(row)
    return [
        {"tenant": tenant, group_by: value, **columns(row)}
        for (tenant, value), row in sorted(sums.items())
    ]


def by_tenant_model_day(rows: Iterable[SpendRow]) -> list[dict[str, Any]]:
    """One entry per (day, tenant, model): keys summed; newest day first."""
    sums: dict[tuple[str, str, str], SpendRow] = {}
    for row in rows:
        identity = (row.day, row.tenant, row.model)
        known = sums.get(identity)
        sums[identity] = row if known is None else known.plus(row)
    ordered = sorted(sums.items(), key=lambda item: (item[0][0], item[0][1], item[0][2]))
    ordered.sort(key=lambda item: item[0][0], reverse=True)
    return [
        {"day": day, "tenant": tenant, "model": model, **columns(row)}
        for (day, tenant, model), row in ordered
    ]


def totals(rows: Iterable[SpendRow]) -> dict[str, Any]:
    total = SpendRow("", "", "", "")
    for row in rows:
        total = total.plus(row)
    return columns(total)


def columns(row: SpendRow) -> dict[str, Any]:
    return {
        "spent_usd": round(row.spent_usd, _DIGITS),
        "saved_usd": round(row.saved_usd, _DIGITS),
        "requests": row.requests,
        "hits": row.hits,
        "estimated_requests": row.estimated_requests,
    }
