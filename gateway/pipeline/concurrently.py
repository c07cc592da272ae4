"""Two awaitables of one request at the same time, for the memory stage: the version
reads of the user's memories and of the tenant's knowledge (two store round trips, one
wait), a session's cache read next to them, and the two searches (the knowledge base
ranked in a worker thread while the user's memories rank on the loop; numpy releases
the GIL in the vector product). One after the other, each waited for the one before
on every turn: docs/measurements.md#memory-work-per-miss.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

First = TypeVar("First")
Second = TypeVar("Second")


async def both(
    first: Coroutine[Any, Any, First], second: Coroutine[Any, Any, Second]
) -> tuple[First, Second]:
    """`first` and `second`, concurrently. `first` is started first and given one loop
    turn, in which it sends its read or hands its work to a thread, before `second`
    runs (which may then run synchronously to the end: a small scope is ranked in
    place). If the second fails, the first is cancelled and waited for; a failure of
    the first is raised once the second is done. Either is raised as it was, not in an
    ExceptionGroup (as `asyncio.TaskGroup` would): callers tell store failures from
    others by type."""
    started = asyncio.ensure_future(first)
    try:
        await asyncio.sleep(0)
        other = await second
    except BaseException:
        started.cancel()
        # Collected, so that a failure of its own is not reported as never retrieved.
        await asyncio.gather(started, return_exceptions=True)
        raise
    return await started, other
