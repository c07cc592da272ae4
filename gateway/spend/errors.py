"""The budget stop's error.

402 (Payment Required), not 429: OpenAI answers an exhausted quota with 429
`insufficient_quota`, but its SDKs (openai-python, openai-node) retry every 429 by
default, twice with back-off, and so do most HTTP retry helpers; a budget that is spent
stays spent until the period ends, so each retry is wasted. 402 is retried by none of
them, and it keeps the budget stop apart from rate limits (429 with `retry-after`).
`x-should-retry: false` tells OpenAI's SDKs the same in their own terms."""

from __future__ import annotations

from gateway.errors import GatewayError


class BudgetExceeded(
    GatewayError, status_code=402, error_type="insufficient_quota", code="budget_exceeded"
):
    pass
