"""Ending a translated stream (Anthropic messages, Responses) when its client leaves."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import anyio


async def close_translated(
    events: AsyncGenerator[Any, None], upstream: AsyncGenerator[Any, None] | None
) -> None:
    """Close the translated `events` and the pipeline's live `upstream` stream now: that
    ends the upstream call and records the request. Shielded, because a client that left
    cancels the response's scope, and an unshielded close would be cancelled with it."""
    with anyio.CancelScope(shield=True):
        await events.aclose()
        if upstream is not None:
            await upstream.aclose()
