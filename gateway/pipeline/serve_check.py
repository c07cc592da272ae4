"""May a stored entry answer this request? Beyond matching it (the exact key, the
semantic judgement), an entry must be able to give back everything the request asks
for (one it cannot reproduce in full is a miss with a reason, never a partial answer),
and be young enough for the request's `Cache-Control: max-age`."""

from __future__ import annotations

import time
from typing import Any

from gateway.completions import replay_gap
from gateway.pipeline.cache_controls import older_than_max_age
from gateway.pipeline.context import ChatContext
from gateway.pipeline.reasons import Reason


def why_not_servable(
    ctx: ChatContext, completion: dict[str, Any], created_at: float
) -> Reason | None:
    """None when `completion`, stored at `created_at`, may answer `ctx`'s request; else
    the miss reason."""
    if older_than_max_age(ctx, created_at, time.time()):
        return Reason.OLDER_THAN_MAX_AGE
    if replay_gap(completion, ctx.body) is not None:
        return Reason.REPLAY_INCOMPLETE
    return None
