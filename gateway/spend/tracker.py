"""What the pipeline calls: the budget check before forwarding, and the cost of each
forwarded request (and the saving of each hit) after the answer, noted in the ledger.
Built by `gateway.spend.build.build_spend`."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from gateway.memory.tokens import Tokenizers
from gateway.pipeline.request import ChatRequest
from gateway.policy.models import Policy
from gateway.spend.budget import BudgetGuard, BudgetStatus
from gateway.spend.keys import spend_key_of
from gateway.spend.ledger import SpendLedger
from gateway.spend.periods import utc_day
from gateway.spend.pricing import Pricer
from gateway.spend.records import SpendRow
from gateway.spend.usage import estimated_usage, reported_usage

# (tenant, model) -> the policy in force (the tenant's own: model "")
PolicyResolver = Callable[[str, str], Policy]
# (tenant, model, usd): counts what a forwarded request cost (the metric)
SpentHook = Callable[[str, str, float], None]


class SpendTracker:
    def __init__(
        self,
        pricer: Pricer,
        ledger: SpendLedger,
        guard: BudgetGuard,
        tokenizers: Tokenizers,
        upstream_models: Mapping[str, str],
        policy_for: PolicyResolver,
        on_spent: SpentHook,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ledger = ledger
        self._pricer = pricer
        self._guard = guard
        self._tokenizers = tokenizers
        self._upstream = upstream_models
        self._policy_for = policy_for
        self._on_spent = on_spent
        self._clock = clock

    async def admit(self, request: ChatRequest) -> BudgetStatus | None:
        """Before forwarding: raises `BudgetExceeded` when the tenant's budget is spent."""
        budget = self._policy_for(request.tenant, "").budget
        return await self._guard.admit(request.tenant, spend_key_of(request.principal), budget)

    def charge(
        self,
        request: ChatRequest,
        model: str,
        body: Mapping[str, Any],
        completion: Mapping[str, Any],
    ) -> float:
        """Notes what the provider's answer to `body` cost (`model`: the gateway model
        that answered); returns the cost."""
        usage = reported_usage(completion)
        if usage is None:
            counter = self._tokenizers.for_model(self._upstream.get(model, model))
            usage = estimated_usage(counter, body, completion)
        cost = self._pricer.cost_usd(model, usage.prompt_tokens, usage.completion_tokens)
        self.ledger.add(
            SpendRow(
                day=utc_day(self._clock()),
                tenant=request.tenant,
                key=spend_key_of(request.principal),
                model=model,
                spent_usd=cost,
                requests=1,
                estimated_requests=int(usage.estimated),
            )
        )
        if cost:
            self._on_spent(request.tenant, model, cost)
        return cost

    def saved(self, request: ChatRequest, model: str, saved_usd: float) -> None:
        """Notes a cache hit and what it saved."""
        self.ledger.add(
            SpendRow(
                day=utc_day(self._clock()),
                tenant=request.tenant,
                key=spend_key_of(request.principal),
                model=model,
                saved_usd=saved_usd,
                hits=1,
            )
        )
