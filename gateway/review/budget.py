"""A per-tenant budget of the tokens chat-model reviews spend in an hour, per process.

Policy `semantic_cache.review.tokens_per_tenant_per_hour` caps what one tenant's reviews
(prompt and completion tokens together) may spend in any sliding hour; the reviewer
reads the number from the request's policy on every call, so a reload applies at once.
A review is charged before its call (`reserve`: the prompt counted with tiktoken plus
the answer's `max_tokens`), which also keeps concurrent reviews from overrunning the
budget together, then corrected to the usage the provider reported (`settle`). A review
that would pass the budget is refused (`ReviewBudgetExhausted`, a `ReviewError`: the
caller's `review_unavailable`, a miss) until the hour moves on.

The hour is kept as one-minute slots per tenant (at most 61), for at most `max_tenants`
tenants, the least recently reviewed forgotten first: a bound on memory (tenants come
from the configured keys, so it is not reached in practice). Each replica keeps its own
count: N replicas let a tenant spend up to N budgets.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable

from gateway.bounded_lru import BoundedLRU
from gateway.review.errors import ReviewError

WINDOW_SECONDS = 3600.0
SLOT_SECONDS = 60.0
MAX_TENANTS = 10_000


class ReviewBudgetExhausted(ReviewError):
    """The tenant's reviews have spent this hour's tokens."""


class ReviewTokenBudget:
    """Tokens reviewed per tenant over the last `window_seconds`; one per reviewer, on
    the event loop (nothing here awaits, so it needs no lock)."""

    def __init__(
        self,
        *,
        window_seconds: float = WINDOW_SECONDS,
        slot_seconds: float = SLOT_SECONDS,
        max_tenants: int = MAX_TENANTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < slot_seconds <= window_seconds:
            raise ValueError("slot_seconds must be in (0, window_seconds]")
        self._window = window_seconds
        self._slot = slot_seconds
        self._clock = clock
        # tenant -> [slot start, tokens] oldest first, each slot within the window.
        self._tenants: BoundedLRU[str, deque[list[float]]] = BoundedLRU(max_tenants)

    def _current(self, slots: deque[list[float]]) -> float:
        """Drops the slots that left the window; the current slot's start."""
        now = self._clock()
        start = math.floor(now / self._slot) * self._slot
        while slots and slots[0][0] <= now - self._window:
            slots.popleft()
        return start

    def spent(self, tenant: str) -> int:
        """Tokens the tenant's reviews spent in the window (0 for one never seen)."""
        slots = self._tenants.get(tenant)
        if slots is None:
            return 0
        self._current(slots)
        return max(0, int(sum(tokens for _, tokens in slots)))

    def reserve(self, tenant: str, tokens: int, limit: int | None) -> None:
        """Charges `tokens` to the tenant, or raises `ReviewBudgetExhausted` when that
        would pass `limit` (None: unbounded; the tokens are still counted)."""
        if limit is not None and self.spent(tenant) + tokens > limit:
            raise ReviewBudgetExhausted(
                f"the tenant's review budget of {limit} tokens an hour is spent"
            )
        self._add(tenant, tokens)

    def settle(self, tenant: str, correction: int) -> None:
        """Corrects a reservation by what the call really used (either sign)."""
        if correction:
            self._add(tenant, correction)

    def _add(self, tenant: str, tokens: int) -> None:
        slots = self._tenants.get(tenant)
        if slots is None:
            slots = deque()
            self._tenants.put(tenant, slots)
        start = self._current(slots)
        if slots and slots[-1][0] == start:
            slots[-1][1] += tokens
        else:
            slots.append([start, float(tokens)])
