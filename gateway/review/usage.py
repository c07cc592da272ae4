"""What this process's chat-model reviews used, per tenant and reviewer model: tokens,
their cost, and each call's verdict. Exported on `/metrics`
(`gateway.telemetry.exports.export_review`) and in `/admin/stats` under `review`.

A verdict here is one review call's: `accepted` (the model said yes), `rejected` (no),
`unavailable` (an error, an answer that is neither, the timeout, or the tenant's token
budget spent: those are also counted apart as `over_budget`). The per-request
`gateway_review_verdicts_total{verdict}` counts the decision each request recorded.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gateway.review.budget import ReviewTokenBudget
from gateway.spend.usage import ChargedUsage

VERDICTS = ("accepted", "rejected", "unavailable")


@dataclass(slots=True)
class ReviewTally:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_calls: int = 0  # calls whose usage was counted with tiktoken
    cost_usd: float = 0.0
    verdicts: Counter[str] = field(default_factory=Counter)
    over_budget: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ReviewUsage:
    """Tallies per (tenant, reviewer model); `budget`, when given, adds each tenant's
    tokens of the last hour to `snapshot`."""

    def __init__(self, budget: ReviewTokenBudget | None = None) -> None:
        self._budget = budget
        self._tallies: dict[tuple[str, str], ReviewTally] = {}

    def _tally(self, tenant: str, model: str) -> ReviewTally:
        key = (tenant, model)
        tally = self._tallies.get(key)
        if tally is None:
            tally = self._tallies[key] = ReviewTally()
        return tally

    def charge(self, tenant: str, model: str, usage: ChargedUsage, cost_usd: float) -> None:
        tally = self._tally(tenant, model)
        tally.prompt_tokens += usage.prompt_tokens
        tally.completion_tokens += usage.completion_tokens
        tally.estimated_calls += usage.estimated
        tally.cost_usd += cost_usd

    def verdict(self, tenant: str, model: str, verdict: str) -> None:
        self._tally(tenant, model).verdicts[verdict] += 1

    def refused(self, tenant: str, model: str) -> None:
        """A review the tenant's budget refused (also an `unavailable` verdict)."""
        tally = self._tally(tenant, model)
        tally.over_budget += 1
        tally.verdicts["unavailable"] += 1

    def tallies(self) -> list[tuple[str, str, ReviewTally]]:
        """(tenant, model, tally), sorted."""
        return [(tenant, model, tally) for (tenant, model), tally in sorted(self._tallies.items())]

    def snapshot(self) -> list[dict[str, Any]]:
        rows = []
        for tenant, model, tally in self.tallies():
            row: dict[str, Any] = {
                "tenant": tenant,
                "model": model,
                "reviews": {verdict: tally.verdicts[verdict] for verdict in VERDICTS},
                "over_budget": tally.over_budget,
                "prompt_tokens": tally.prompt_tokens,
                "completion_tokens": tally.completion_tokens,
                "estimated_calls": tally.estimated_calls,
                "cost_usd": round(tally.cost_usd, 8),
            }
            if self._budget is not None:
                row["tokens_last_hour"] = self._budget.spent(tenant)
            rows.append(row)
        return rows


def usage_of(reviewer: object) -> ReviewUsage | None:
    """The usage a reviewer keeps (a chat-model reviewer does; the local one spends
    nothing), or None."""
    usage = getattr(reviewer, "usage", None)
    return usage if isinstance(usage, ReviewUsage) else None
