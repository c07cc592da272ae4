"""GCRA with a fake clock: the burst, the even refill, all-or-nothing charges,
corrections, and the retry-after the 429 carries."""

from __future__ import annotations

import pytest

from gateway.limits import gcra
from gateway.storage.embedded.rate_limiter import InProcessRateLimiter
from gateway.storage.rate_limiting import RateBucket


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _requests(per_minute: int, burst: int | None = None, key: str = "t:acme:rq") -> RateBucket:
    return RateBucket(key, per_minute, burst or per_minute, 1)


def test_a_full_bucket_admits_its_burst_then_refuses_with_the_wait() -> None:
    tats: dict[str, float] = {}
    bucket = _requests(3)  # one request refills every 20 s
    verdicts = [gcra.acquire(tats, [bucket], now=0.0) for _ in range(4)]
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert [v.states[0].remaining for v in verdicts] == [2, 1, 0, 0]
    assert verdicts[3].retry_after_seconds == pytest.approx(20.0)
    # After the wait it admits exactly one more.
    assert gcra.acquire(tats, [bucket], now=19.9).allowed is False
    assert gcra.acquire(tats, [bucket], now=20.0).allowed is True
    assert gcra.acquire(tats, [bucket], now=20.0).allowed is False


def test_sub_second_precision() -> None:
    tats: dict[str, float] = {}
    bucket = _requests(600, burst=1)  # one request every 0.1 s
    assert gcra.acquire(tats, [bucket], now=0.0).allowed
    refused = gcra.acquire(tats, [bucket], now=0.05)
    assert not refused.allowed and refused.retry_after_seconds == pytest.approx(0.05)
    assert gcra.acquire(tats, [bucket], now=0.1).allowed


def test_a_refused_charge_takes_nothing_from_any_bucket() -> None:
    tats: dict[str, float] = {}
    tenant, key = _requests(10, key="t:acme:rq"), _requests(1, key="k:abc:rq")
    assert gcra.acquire(tats, [tenant, key], now=0.0).allowed
    before = dict(tats)
    refused = gcra.acquire(tats, [tenant, key], now=0.0)
    assert not refused.allowed
    assert tats == before  # the tenant bucket was not charged for the refused request
    assert refused.states[0].remaining == 9


def test_a_correction_gives_back_or_adds_tokens_but_never_below_empty() -> None:
    tats: dict[str, float] = {}
    tokens = RateBucket("t:acme:tk", 100, 100, 60)
    assert gcra.acquire(tats, [tokens], now=0.0).states[0].remaining == 40
    assert not gcra.acquire(tats, [tokens], now=0.0).allowed
    gcra.adjust(tats, [RateBucket("t:acme:tk", 100, 100, -43)], now=0.0)  # used 17
    assert gcra.acquire(tats, [tokens], now=0.0).allowed
    gcra.adjust(tats, [RateBucket("t:acme:tk", 100, 100, -10_000)], now=0.0)
    assert gcra.state_after(tokens, tats["t:acme:tk"], 0.0).remaining == 100


def test_a_charge_of_zero_passes_until_the_bucket_is_in_debt() -> None:
    tats: dict[str, float] = {}
    check = RateBucket("d:x:tk", 60, 60, 0)
    assert gcra.acquire(tats, [check], now=0.0).allowed
    gcra.adjust(tats, [RateBucket("d:x:tk", 60, 60, 90)], now=0.0)  # 30 over the burst
    refused = gcra.acquire(tats, [check], now=0.0)
    assert not refused.allowed and refused.retry_after_seconds == pytest.approx(30.0)


async def test_the_in_process_limiter_refills_with_its_clock() -> None:
    clock = FakeClock()
    limiter = InProcessRateLimiter(clock)
    bucket = _requests(60, burst=2)
    assert [(await limiter.acquire([bucket])).allowed for _ in range(3)] == [True, True, False]
    clock.now += 1.0
    assert (await limiter.acquire([bucket])).allowed
    assert not (await limiter.acquire([bucket])).allowed
    await limiter.adjust([RateBucket(bucket.key, 60, 2, -1)])
    assert (await limiter.acquire([bucket])).allowed
