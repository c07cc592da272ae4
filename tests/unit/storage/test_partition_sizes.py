"""PartitionSizes: a partition is counted once on first use, recounted behind the
searches when its count is old, and a failed count leaves it unknown for an interval."""

from __future__ import annotations

import asyncio

import pytest

from gateway.storage.redis.partition_sizes import PartitionSizes


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


async def _settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


async def test_the_first_search_waits_for_the_count_and_later_ones_reuse_it() -> None:
    counter, clock = Counter(), Clock()
    counter.sizes["fp"] = 12_000
    sizes = PartitionSizes(counter, refresh_seconds=30.0, clock=clock)
    assert await sizes.size("fp") == 12_000
    clock.now += 29.0
    assert await sizes.size("fp") == 12_000
    assert counter.calls == ["fp"]


async def test_an_old_count_is_served_while_it_is_recounted_behind() -> None:
    counter, clock = Counter(), Clock()
    counter.sizes["fp"] = 500
    sizes = PartitionSizes(counter, refresh_seconds=30.0, clock=clock)
    assert await sizes.size("fp") == 500
    counter.sizes["fp"] = 40_000
    clock.now += 31.0
    # The search does not wait: it gets the last count, and one recount starts.
    assert await sizes.size("fp") == 500
    assert await sizes.size("fp") == 500
    await _settle()
    assert counter.calls == ["fp", "fp"]
    assert await sizes.size("fp") == 40_000
    await sizes.close()


async def test_concurrent_first_searches_share_one_count() -> None:
    counter = Counter()
    counter.sizes["fp"] = 7
    counter.gate = asyncio.Event()
    sizes = PartitionSizes(counter, refresh_seconds=30.0)
    waiting = [asyncio.ensure_future(sizes.size("fp")) for _ in range(5)]
    await _settle()
    counter.gate.set()
    assert await asyncio.gather(*waiting) == [7] * 5
    assert counter.calls == ["fp"]


async def test_a_failed_count_is_unknown_and_retried_once_per_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    counter, clock = Counter(), Clock()
    counter.sizes["fp-secret-tenant"] = 9
    counter.fail = True
    sizes = PartitionSizes(counter, refresh_seconds=30.0, clock=clock)
    with caplog.at_level("WARNING", logger="gateway.storage.redis.partition_sizes"):
        assert await sizes.size("fp-secret-tenant") is None
        assert await sizes.size("fp-secret-tenant") is None
    assert len(counter.calls) == 1
    assert "ConnectionError" in caplog.text
    # The fingerprint names a tenant: it is not logged.
    assert "secret" not in caplog.text
    counter.fail = False
    clock.now += 30.0
    assert await sizes.size("fp-secret-tenant") is None  # recounting behind this search
    await _settle()
    assert await sizes.size("fp-secret-tenant") == 9


async def test_the_least_recently_searched_partitions_are_forgotten_past_the_bound() -> None:
    counter = Counter()
    counter.sizes.update({"a": 1, "b": 2, "c": 3})
    sizes = PartitionSizes(counter, refresh_seconds=30.0, max_partitions=2)
    await sizes.size("a")
    await sizes.size("b")
    await sizes.size("a")
    await sizes.size("c")  # "b" was searched least recently: dropped
    assert counter.calls == ["a", "b", "c"]
    await sizes.size("b")
    assert counter.calls == ["a", "b", "c", "b"]
