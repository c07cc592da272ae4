"""PartitionSizes: a partition is counted in the background on first use (no search
waits), recounted behind the searches when its count is old (later the larger it is
against the exact-scan limit), and a failed count leaves it unknown for an interval."""

from __future__ import annotations

import asyncio

import pytest

from gateway.storage.redis.partition_sizes import MAX_REFRESH_SECONDS, PartitionSizes


class Counter:
    """A count per fingerprint that the test sets, remembering each call."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}
        self.calls: list[str] = []
        self.fail = False
        self.gate: asyncio.Event | None = None

    async def __call__(self, fingerprint: str) -> int:
        self.calls.append(fingerprint)
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise ConnectionError("redis went away")
        return self.sizes[fingerprint]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _sizes(counter: Counter, clock: Clock, **options: int) -> PartitionSizes:
    return PartitionSizes(
        counter,
        refresh_seconds=30.0,
        exact_scan_limit=options.get("limit", 10_000),
        clock=clock,
        max_partitions=options.get("max_partitions", 100),
    )


async def test_no_search_waits_for_a_count_and_later_ones_reuse_it() -> None:
    counter, clock = Counter(), Clock()
    counter.sizes["fp"] = 8_000
    counter.gate = asyncio.Event()
    sizes = _sizes(counter, clock)
    assert sizes.size("fp") is None  # unknown: RediSearch chooses for this search
    assert sizes.size("fp") is None  # the count under way is not started twice
    counter.gate.set()
    await sizes.settled()
    assert sizes.size("fp") == 8_000
    clock.now += 29.0
    assert sizes.size("fp") == 8_000
    assert counter.calls == ["fp"]


async def test_an_old_count_is_served_while_it_is_recounted_behind() -> None:
    counter, clock = Counter(), Clock()
    counter.sizes["fp"] = 500
    sizes = _sizes(counter, clock)
    sizes.size("fp")
    await sizes.settled()
    counter.sizes["fp"] = 12_000
    clock.now += 31.0
    assert sizes.size("fp") == 500
    await sizes.settled()
    assert counter.calls == ["fp", "fp"]
    assert sizes.size("fp") == 12_000


async def test_a_partition_far_above_the_limit_is_recounted_less_often() -> None:
    counter, clock = Counter(), Clock()
    counter.sizes.update({"big": 50_000, "huge": 10_000_000})
    sizes = _sizes(counter, clock)  # limit 10,000: "big" is 5x over it
    sizes.size("big")
    sizes.size("huge")
    await sizes.settled()
    clock.now += 149.0
    sizes.size("big")
    clock.now += 1.0  # 150 s = 30 s x 5
    sizes.size("big")
    await sizes.settled()
    assert counter.calls.count("big") == 2
    clock.now = 100.0 + MAX_REFRESH_SECONDS  # capped at an hour, however large
    sizes.size("huge")
    await sizes.settled()
    assert counter.calls.count("huge") == 2


async def test_a_failed_count_is_unknown_and_retried_once_per_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    counter, clock = Counter(), Clock()
    counter.sizes["fp-secret-tenant"] = 9
    counter.fail = True
    sizes = _sizes(counter, clock)
    with caplog.at_level("WARNING", logger="gateway.storage.redis.partition_sizes"):
        sizes.size("fp-secret-tenant")
        await sizes.settled()
        assert sizes.size("fp-secret-tenant") is None
        await sizes.settled()
    assert len(counter.calls) == 1
    assert "ConnectionError" in caplog.text
    # The fingerprint names a tenant: it is not logged.
    assert "secret" not in caplog.text
    counter.fail = False
    clock.now += 30.0
    assert sizes.size("fp-secret-tenant") is None  # recounting behind this search
    await sizes.settled()
    assert sizes.size("fp-secret-tenant") == 9


async def test_the_least_recently_searched_partitions_are_forgotten_past_the_bound() -> None:
    counter, clock = Counter(), Clock()
    counter.sizes.update({"a": 1, "b": 2, "c": 3})
    sizes = _sizes(counter, clock, max_partitions=2)
    for name in ("a", "b", "a"):
        sizes.size(name)
        await sizes.settled()
    sizes.size("c")  # "b" was searched least recently: dropped
    await sizes.settled()
    assert counter.calls == ["a", "b", "c"]
    assert sizes.size("b") is None
    await sizes.settled()
    assert counter.calls == ["a", "b", "c", "b"]


async def test_partitions_are_counted_one_at_a_time() -> None:
    # Each count holds Redis's main thread and is judged by its own duration: counts
    # started together (the first search of many partitions) must not queue in Redis.
    in_flight, most = 0, 0

    async def count(fingerprint: str) -> int:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.001)
        in_flight -= 1
        return 5

    sizes = PartitionSizes(count, refresh_seconds=30.0, exact_scan_limit=10_000)
    for partition in range(20):
        assert sizes.size(f"fp{partition}") is None
    await sizes.settled()
    assert most == 1
    assert all(sizes.size(f"fp{partition}") == 5 for partition in range(20))
