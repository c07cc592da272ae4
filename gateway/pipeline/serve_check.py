"""May a stored entry answer this request? Beyond matching it (the exact key, the
semantic judgement), an entry must be able to give back everything the request asks
for (one it cannot reproduce in full is a miss with a reason, never a partial answer),
and be young enough for the request's `Cache-Control: max-age`."""

from __future__ import annotations

import time
from typing import Any

from gateway.completions import replay_gap
from gateway.pipeline.cache_controls import older_than_max_age
from gateway.pipeline.reasons import Reason
from gateway.pipeline.request import ChatRequest


def why_not_servable(
    request: ChatRequest, completion: dict[str, Any], created_at: float
) -> Reason | None:
    """None when `completion`, stored at `created_at`, may answer `request`'s request; else
    the miss reason."""
    if older_than_max_age(request, created_at, time.time()):
        return Reason.OLDER_THAN_MAX_AGE
    if replay_gap(completion, request.body) is not None:
        return Reason.REPLAY_INCOMPLETE
    return None
