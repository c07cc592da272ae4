"""`both`: two awaitables of one request at once, the first started first; a failure
of the second cancels the first, and either comes back as it was raised (not in an
ExceptionGroup)."""

from __future__ import annotations

import asyncio

import pytest

from gateway.pipeline.concurrently import both


async def test_both_results_come_back_in_order_and_the_waits_overlap() -> None:
    events: list[str] = []

    async def first() -> str:
        events.append("first started")
        await asyncio.sleep(0.05)
        return "a"

    async def second() -> str:
        events.append("second started")
        await asyncio.sleep(0.05)
        return "b"

    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await both(first(), second()) == ("a", "b")
    assert events == ["first started", "second started"]
    assert loop.time() - started < 0.09


async def test_the_first_gets_its_turn_before_a_second_that_never_yields() -> None:
    events: list[str] = []

    async def first() -> None:
        events.append("first sent its read")
        await asyncio.sleep(0)
        events.append("first done")

    async def second() -> None:
        events.append("second ran to the end")

    await both(first(), second())
    assert events == ["first sent its read", "second ran to the end", "first done"]


async def test_a_failure_cancels_the_other_and_is_raised_unwrapped() -> None:
    cancelled = asyncio.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def failing() -> None:
        raise LookupError("store down")

    with pytest.raises(LookupError, match="store down"):
        await both(slow(), failing())
    assert cancelled.is_set()


async def test_a_failure_of_the_first_is_raised_once_the_second_is_done() -> None:
    async def failing() -> None:
        await asyncio.sleep(0)
        raise LookupError("store down")

    async def second() -> str:
        await asyncio.sleep(0.01)
        return "b"

    with pytest.raises(LookupError):
        await both(failing(), second())
