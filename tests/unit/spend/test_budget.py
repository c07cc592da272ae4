"""The budget check on a fake clock and an in-memory spend store: caps per UTC day and
month, the soft threshold once per period, the ledger's pending spend, and a store that
is down (the check fails open on what is known; rows stay pending)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gateway.policy.budget import BudgetPolicy
from gateway.spend.budget import BudgetGuard
from gateway.spend.errors import BudgetExceeded
from gateway.spend.ledger import SpendLedger
from gateway.spend.records import SpendRow
from gateway.storage.protocols import StoreUnavailable
from gateway.testing.fakes import MemorySpendStore


class Clock:
    def __init__(self, text: str) -> None:
        self.now = 0.0
        self.set(text)

    def set(self, text: str) -> None:
        self.now = datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()

    def __call__(self) -> float:
        return self.now


def _spend(day: str, usd: float, tenant: str = "acme") -> SpendRow:
    return SpendRow(day, tenant, "k1", "m", spent_usd=usd, requests=1)


def _guard(
    store: MemorySpendStore, clock: Clock, *, shared: bool = False
) -> tuple[SpendLedger, BudgetGuard, list[tuple[str, str]]]:
    ticks = [0.0]
    ledger = SpendLedger(store, shared=shared, refresh_seconds=1.0, monotonic=lambda: ticks[0])
    soft: list[tuple[str, str]] = []
    guard = BudgetGuard(ledger, on_soft=lambda t, p: soft.append((t, p)), clock=clock)
    return ledger, guard, soft


async def test_a_daily_cap_counts_today_only_and_renews_at_midnight_utc() -> None:
    store, clock = MemorySpendStore(), Clock("2026-03-10T23:59:00")
    ledger, guard, _ = _guard(store, clock)
    budget = BudgetPolicy(daily_usd=1.0)
    await store.add([_spend("2026-03-09", 5.0)])  # yesterday's spend does not count
    status = await guard.admit("acme", "k1", budget)
    assert status is not None and status.remaining_usd == pytest.approx(1.0)
    ledger.add(_spend("2026-03-10", 1.0))  # pending, not written yet: counted at once
    with pytest.raises(BudgetExceeded) as refused:
        await guard.admit("acme", "k1", budget)
    assert refused.value.status_code == 402 and refused.value.headers["x-should-retry"] == "false"
    # Another tenant is not affected.
    assert await guard.admit("globex", "k9", budget) is not None
    clock.set("2026-03-11T00:00:00")
    status = await guard.admit("acme", "k1", budget)
    assert status is not None and status.remaining_usd == pytest.approx(1.0)


async def test_a_monthly_cap_sums_the_month_and_renews_on_the_first() -> None:
    store, clock = MemorySpendStore(), Clock("2026-01-31T12:00:00")
    ledger, guard, _ = _guard(store, clock)
    budget = BudgetPolicy(monthly_usd=10.0, daily_usd=8.0)
    await store.add([_spend("2025-12-31", 100.0), _spend("2026-01-01", 4.0)])
    ledger.add(_spend("2026-01-31", 5.0))
    status = await guard.admit("acme", "k1", budget)
    # daily: 8 - 5 = 3 left; monthly: 10 - 9 = 1 left.
    assert status is not None and status.remaining_usd == pytest.approx(1.0)
    ledger.add(_spend("2026-01-31", 1.0))
    with pytest.raises(BudgetExceeded, match="monthly"):
        await guard.admit("acme", "k1", budget)
    clock.set("2026-02-01T00:00:00")
    status = await guard.admit("acme", "k1", budget)
    assert status is not None and status.remaining_usd == pytest.approx(8.0)


async def test_the_soft_threshold_warns_every_request_but_counts_once_per_period() -> None:
    store, clock = MemorySpendStore(), Clock("2026-05-01T08:00:00")
    ledger, guard, soft = _guard(store, clock)
    budget = BudgetPolicy(daily_usd=10.0, soft_threshold=0.5)
    ledger.add(_spend("2026-05-01", 4.9))
    status = await guard.admit("acme", "k1", budget)
    assert status is not None and status.warning is None
    ledger.add(_spend("2026-05-01", 0.1))
    for _ in range(3):
        status = await guard.admit("acme", "k1", budget)
        assert status is not None and status.warning == "daily"
        assert status.headers()["x-gateway-budget-warning"] == "daily"
    assert soft == [("acme", "daily")]
    clock.set("2026-05-02T08:00:00")
    ledger.add(_spend("2026-05-02", 6.0))
    await guard.admit("acme", "k1", budget)
    assert soft == [("acme", "daily"), ("acme", "daily")]


async def test_no_cap_no_check() -> None:
    store = MemorySpendStore()
    _, guard, _ = _guard(store, Clock("2026-05-01T08:00:00"))
    assert await guard.admit("acme", "k1", BudgetPolicy()) is None
    assert store.reads == 0


async def test_embedded_reads_once_redis_refreshes_and_flushes_are_not_double_counted() -> None:
    store = MemorySpendStore()
    ticks = [0.0]
    shared = SpendLedger(store, shared=True, refresh_seconds=1.0, monotonic=lambda: ticks[0])
    alone = SpendLedger(store, shared=False, monotonic=lambda: ticks[0])
    day = ["2026-05-01"]
    assert await shared.tenant_spent("acme", day) == 0.0
    assert await alone.tenant_spent("acme", day) == 0.0
    shared.add(_spend("2026-05-01", 2.0))
    await shared.flush()  # written: now stored, no longer pending
    assert await shared.tenant_spent("acme", day) == pytest.approx(2.0)
    # Another replica's spend: the shared ledger sees it after the refresh interval.
    await store.add([_spend("2026-05-01", 3.0)])
    assert await shared.tenant_spent("acme", day) == pytest.approx(2.0)
    ticks[0] = 1.5
    assert await shared.tenant_spent("acme", day) == pytest.approx(5.0)
    # The one-process ledger read the store once and keeps its own count.
    reads = store.reads
    alone.add(_spend("2026-05-01", 1.0))
    await alone.flush()
    assert await alone.tenant_spent("acme", day) == pytest.approx(1.0)
    assert store.reads == reads


async def test_a_store_that_is_down_keeps_the_rows_and_the_check_fails_open() -> None:
    store, clock = MemorySpendStore(), Clock("2026-05-01T08:00:00")
    failures: list[tuple[str, str]] = []
    ledger = SpendLedger(store, shared=True, on_failure=lambda s, o: failures.append((s, o)))
    guard = BudgetGuard(ledger, clock=clock)
    store.failure = StoreUnavailable("down")
    ledger.add(_spend("2026-05-01", 0.4))
    await ledger.flush()
    assert ("spend", "add") in failures
    status = await guard.admit("acme", "k1", BudgetPolicy(daily_usd=1.0))
    assert ("spend", "read") in failures
    # What this process recorded still counts while the store is down.
    assert status is not None and status.remaining_usd == pytest.approx(0.6)
    store.failure = None
    await ledger.close()  # the kept rows are written on the way out
    assert (await store.tenant_spent("acme", ["2026-05-01"]))["2026-05-01"] == pytest.approx(0.4)


async def test_a_key_cap_stops_that_key_only() -> None:
    store, clock = MemorySpendStore(), Clock("2026-06-01T09:00:00")
    ledger, guard, soft = _guard(store, clock, shared=True)
    budget = BudgetPolicy(key_daily_usd=1.0, daily_usd=5.0, soft_threshold=0.5)
    await store.add([SpendRow("2026-06-01", "acme", "k2", "m", spent_usd=0.6)])
    ledger.add(SpendRow("2026-06-01", "acme", "k1", "m", spent_usd=1.0))
    with pytest.raises(BudgetExceeded, match="API key"):
        await guard.admit("acme", "k1", budget)
    # The other key has its own day; the tenant's total (1.6) counts both.
    status = await guard.admit("acme", "k2", budget)
    assert status is not None and status.warning == "key_daily"
    assert status.remaining_usd == pytest.approx(0.4)
    assert await ledger.tenant_spent("acme", ["2026-06-01"]) == pytest.approx(1.6)
    assert soft == [("acme", "key_daily")]
    # A warning for one key does not forget another key's of the same day.
    await guard.admit("acme", "k2", budget)
    assert soft == [("acme", "key_daily")]
