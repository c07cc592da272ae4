"""May a stored entry answer this request? Beyond matching it (the exact key, the
semantic judgement), an entry must be able to give back everything the request asks
for: one it cannot reproduce in full is a miss with a reason, never a partial answer."""

from __future__ import annotations

from typing import Any

from gateway.completions import replay_gap
from gateway.pipeline.context import ChatContext
from gateway.pipeline.reasons import Reason


def why_not_servable(ctx: ChatContext, completion: dict[str, Any]) -> Reason | None:
    """None when `completion` may answer `ctx`'s request; else the miss reason."""
    if replay_gap(completion, ctx.body) is not None:
        return Reason.REPLAY_INCOMPLETE
    return None
