"""The generic cell rate algorithm (GCRA), the in-process form of the Redis script.

Each bucket keeps one number: its theoretical arrival time (TAT), the time at which it
would be empty of debt. A unit costs `T = 60 / per_minute` seconds; a bucket holds at
most `burst` units, i.e. a tolerance `tau = T * burst`. A charge of `c` units at `now`:

    tat = max(stored_tat, now);  new_tat = tat + c * T
    allowed  iff  new_tat - tau <= now      (else retry after new_tat - tau - now)

This is a token bucket of `burst` units refilled at `per_minute` a minute, with exact
sub-second timing and one stored float per bucket. A charge larger than the burst is
clamped to the burst by the caller, so a request bigger than a whole minute's tokens
passes when the bucket is full (and leaves it in debt) rather than never.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence

from gateway.storage.rate_limiting import BucketState, RateBucket, RateVerdict


def state_after(bucket: RateBucket, tat: float, now: float) -> BucketState:
    """Units left and seconds until full for a bucket whose TAT is `tat`."""
    emission = bucket.emission_seconds
    room = now + bucket.tolerance_seconds - max(tat, now)
    remaining = min(bucket.burst, max(0, math.floor(room / emission + 1e-9)))
    return BucketState(remaining=remaining, reset_seconds=max(0.0, tat - now))


def acquire(
    tats: MutableMapping[str, float], buckets: Sequence[RateBucket], now: float
) -> RateVerdict:
    """Charge every bucket in `tats` (key -> TAT) or none; see the module docstring."""
    new_tats: list[float] = []
    retry_after = 0.0
    for bucket in buckets:
        tat = max(tats.get(bucket.key, now), now)
        new_tat = tat + bucket.cost * bucket.emission_seconds
        allow_at = new_tat - bucket.tolerance_seconds
        if allow_at > now:
            retry_after = max(retry_after, allow_at - now)
        new_tats.append(new_tat)
    if retry_after > 0:
        states = tuple(state_after(b, tats.get(b.key, now), now) for b in buckets)
        return RateVerdict(False, retry_after, states)
    for bucket, new_tat in zip(buckets, new_tats, strict=True):
        tats[bucket.key] = new_tat
    states = tuple(state_after(b, t, now) for b, t in zip(buckets, new_tats, strict=True))
    return RateVerdict(True, 0.0, states)


def adjust(tats: MutableMapping[str, float], buckets: Sequence[RateBucket], now: float) -> None:
    """Add each bucket's (possibly negative) cost; a bucket never goes below empty."""
    for bucket in buckets:
        tat = max(tats.get(bucket.key, now), now)
        tats[bucket.key] = max(now, tat + bucket.cost * bucket.emission_seconds)


def expired_keys(tats: Mapping[str, float], now: float) -> list[str]:
    """Buckets that are full again: forgetting them changes nothing."""
    return [key for key, tat in tats.items() if tat <= now]
