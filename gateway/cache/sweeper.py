"""The background sweep of expired cache entries, run by the app's lifespan.

Expired entries are never served (every read checks the expiry), but without a sweep
they would stay on disk and in the in-process index until a restart."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)


async def sweep_periodically(sweep: Callable[[], Awaitable[int]], interval_seconds: float) -> None:
    """Run `sweep` every `interval_seconds` until cancelled; a failed sweep is logged
    (by error type only) and retried at the next interval."""
    while True:
        await asyncio.sleep(interval_seconds)
        try:
            removed = await sweep()
        except Exception as exc:  # a sweep must never end the loop
            logger.warning("expiry sweep failed (%s); retrying later", type(exc).__name__)
            continue
        if removed:
            logger.debug("expiry sweep removed %d entries", removed)


def start_sweeper(
    sweep: Callable[[], Awaitable[int]], interval_seconds: float
) -> asyncio.Task[None]:
    return asyncio.create_task(sweep_periodically(sweep, interval_seconds), name="expiry-sweep")


async def stop_sweeper(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
