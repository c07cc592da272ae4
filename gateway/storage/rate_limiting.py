"""The rate limiter's protocol and the records it exchanges (GCRA, see
`gateway/limits/gcra.py`); re-exported by `gateway/storage/protocols.py`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class RateBucket:
    """One limit to charge: `per_minute` units (requests or tokens) refill evenly over a
    minute, up to `burst` at once; this charge takes `cost` units (0: only check that
    the bucket is not in debt; negative, in `adjust`: give units back)."""

    key: str
    per_minute: int
    burst: int
    cost: int

    @property
    def emission_seconds(self) -> float:
        """The time one unit takes to refill."""
        return 60.0 / self.per_minute

    @property
    def tolerance_seconds(self) -> float:
        return self.emission_seconds * self.burst


@dataclass(frozen=True, slots=True)
class BucketState:
    """A bucket after a check: units left now, and seconds until it is full again."""

    remaining: int
    reset_seconds: float


@dataclass(frozen=True, slots=True)
class RateVerdict:
    """All buckets charged (`allowed`), or none; `retry_after_seconds` is the wait until
    every bucket could take its charge (0 when allowed). `states` follow the buckets."""

    allowed: bool
    retry_after_seconds: float
    states: tuple[BucketState, ...]


class RateLimiter(Protocol):
    """Buckets by key, shared by every process that uses the same store. Raises
    `StoreUnavailable` when the store is down (the caller fails open or closed)."""

    async def acquire(self, buckets: Sequence[RateBucket]) -> RateVerdict:
        """Charge every bucket its cost, or none of them if any lacks room."""
        ...

    async def adjust(self, buckets: Sequence[RateBucket]) -> None:
        """Add each bucket's cost unconditionally (a correction: usage after the call
        minus the estimate charged before it); never refuses."""
        ...
