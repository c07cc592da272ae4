"""Builds the spend tracker the pipeline uses (from `gateway.wiring.build_services`)."""

from __future__ import annotations

from contextlib import AsyncExitStack

from gateway.memory.limits import ModelLimits
from gateway.memory.tokens import Tokenizers
from gateway.policy.loader import PolicyStore
from gateway.settings import GatewayConfig
from gateway.spend.budget import BudgetGuard
from gateway.spend.ledger import SpendLedger
from gateway.spend.pricing import Pricer
from gateway.spend.tracker import SpendTracker
from gateway.storage.opened import Storage
from gateway.telemetry.metrics import GatewayMetrics


def build_spend(
    stack: AsyncExitStack,
    config: GatewayConfig,
    pricer: Pricer,
    storage: Storage,
    limits: ModelLimits,
    tokenizers: Tokenizers,
    metrics: GatewayMetrics,
    policies: PolicyStore,
) -> SpendTracker:
    """Its ledger started; `stack` stops it (writing the last rows) before the stores
    close."""
    ledger = SpendLedger(
        storage.spend,
        # Replicas share a Redis: their spend shows up in each other's totals on a read.
        shared=storage.backend == "redis",
        refresh_seconds=config.spend.budget_refresh_seconds,
        flush_seconds=config.spend.flush_seconds,
        on_failure=metrics.store_failure,
    )
    guard = BudgetGuard(
        ledger,
        on_soft=lambda tenant, period: metrics.budget_soft_exceeded.labels(tenant, period).inc(),
        on_exceeded=lambda tenant, period: metrics.budget_exceeded.labels(tenant, period).inc(),
    )
    tracker = SpendTracker(
        pricer,
        ledger,
        guard,
        tokenizers,
        limits.upstream_models,
        policies.resolve,
        on_spent=lambda tenant, model, usd: metrics.cost_spent.labels(tenant, model).inc(usd),
    )
    ledger.start()
    stack.push_async_callback(ledger.close)
    return tracker
