"""The per-tenant hourly budget of review tokens."""

from __future__ import annotations

import pytest

from gateway.review.budget import ReviewBudgetExhausted, ReviewTokenBudget
from gateway.review.errors import ReviewError


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_review_that_would_pass_the_budget_is_refused() -> None:
    budget = ReviewTokenBudget(clock=Clock())
    budget.reserve("acme", 600, limit=1000)
    budget.reserve("acme", 400, limit=1000)  # exactly the budget
    with pytest.raises(ReviewBudgetExhausted) as caught:
        budget.reserve("acme", 1, limit=1000)
    assert isinstance(caught.value, ReviewError)  # the caller's review_unavailable
    assert budget.spent("acme") == 1000  # the refused one is not counted


def test_tenants_have_budgets_of_their_own() -> None:
    budget = ReviewTokenBudget(clock=Clock())
    budget.reserve("acme", 1000, limit=1000)
    budget.reserve("globex", 1000, limit=1000)
    assert (budget.spent("acme"), budget.spent("globex"), budget.spent("initech")) == (
        1000,
        1000,
        0,
    )


def test_no_limit_counts_but_never_refuses() -> None:
    budget = ReviewTokenBudget(clock=Clock())
    for _ in range(3):
        budget.reserve("acme", 10**9, limit=None)
    assert budget.spent("acme") == 3 * 10**9


def test_a_zero_budget_refuses_every_review() -> None:
    with pytest.raises(ReviewBudgetExhausted):
        ReviewTokenBudget(clock=Clock()).reserve("acme", 1, limit=0)


def test_settling_corrects_the_reservation_both_ways() -> None:
    budget = ReviewTokenBudget(clock=Clock())
    budget.reserve("acme", 300, limit=1000)
    budget.settle("acme", -250)  # the call used 50
    assert budget.spent("acme") == 50
    budget.settle("acme", 900)  # a call used far more than reserved
    assert budget.spent("acme") == 950
    with pytest.raises(ReviewBudgetExhausted):
        budget.reserve("acme", 51, limit=1000)


def test_spending_leaves_the_window_after_an_hour() -> None:
    clock = Clock()
    budget = ReviewTokenBudget(clock=clock)
    budget.reserve("acme", 700, limit=1000)
    clock.now += 1800
    budget.reserve("acme", 300, limit=1000)
    with pytest.raises(ReviewBudgetExhausted):
        budget.reserve("acme", 1, limit=1000)
    clock.now += 1800 + 60  # the first reservation is over an hour old
    assert budget.spent("acme") == 300
    budget.reserve("acme", 700, limit=1000)
    clock.now += 3600 + 60
    assert budget.spent("acme") == 0


def test_memory_is_bounded_by_tenants_and_slots() -> None:
    clock = Clock()
    budget = ReviewTokenBudget(clock=clock, max_tenants=2)
    for tenant in ("a", "b", "c"):
        budget.reserve(tenant, 10, limit=None)
    assert budget.spent("a") == 0  # the least recently reviewed tenant was forgotten
    assert budget.spent("c") == 10
    for _ in range(200):  # one slot a minute, at most an hour of them
        clock.now += 60
        budget.reserve("c", 1, limit=None)
    assert budget.spent("c") <= 61
    assert len(budget._tenants.get("c") or ()) <= 61


def test_the_slot_must_fit_the_window() -> None:
    with pytest.raises(ValueError):
        ReviewTokenBudget(window_seconds=60, slot_seconds=120)
