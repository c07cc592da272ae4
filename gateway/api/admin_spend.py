"""`GET /admin/spend` (admin keys only): the recorded spend and savings, from the store
(shared by replicas on Redis), this process's pending rows written first.

    GET /admin/spend?tenant=&from=YYYY-MM-DD&to=YYYY-MM-DD&group_by=day|model|key

`from`/`to` are UTC days, both included (default: the last 30 days up to today; at
most 400 days); no `tenant`: every tenant. Rows: one per tenant and day, model or key.
"""

from __future__ import annotations

import time
from datetime import timedelta

from fastapi import APIRouter, Request, Response

from gateway.api.admin import AdminServices
from gateway.api.responses import json_response
from gateway.errors import InvalidRequest, StoreUnavailableResponse
from gateway.spend.periods import days_between, parse_day, utc_date
from gateway.spend.report import GROUPS, grouped, totals
from gateway.storage.protocols import StoreUnavailable

router = APIRouter()

DEFAULT_RANGE_DAYS = 30


def _day_param(request: Request, name: str, default: str) -> str:
    raw = request.query_params.get(name, default)
    try:
        return parse_day(raw).isoformat()
    except ValueError:
        raise InvalidRequest(f"'{name}' must be a UTC day as YYYY-MM-DD.", param=name) from None


def _days(request: Request) -> list[str]:
    today = utc_date(time.time())
    last = _day_param(request, "to", today.isoformat())
    first_default = parse_day(last) - timedelta(days=DEFAULT_RANGE_DAYS - 1)
    first = _day_param(request, "from", first_default.isoformat())
    try:
        return days_between(parse_day(first), parse_day(last))
    except ValueError as exc:
        raise InvalidRequest(f"'from'..'to': {exc}.", param="from") from None


@router.get("/admin/spend")
async def spend(request: Request, services: AdminServices) -> Response:
    days = _days(request)
    group_by = request.query_params.get("group_by", "day")
    if group_by not in GROUPS:
        raise InvalidRequest("'group_by' must be one of day, model, key.", param="group_by")
    tenant = request.query_params.get("tenant") or None
    try:
        await services.spend.ledger.flush()
        rows = await services.spend.ledger.store.rows(days, tenant)
    except StoreUnavailable as exc:
        raise StoreUnavailableResponse("The spend store is unavailable; retry.") from exc
    return json_response(
        {
            "object": "list",
            "from": days[0],
            "to": days[-1],
            "tenant": tenant,
            "group_by": group_by,
            "data": grouped(rows, group_by),
            "total": totals(rows),
        }
    )
