"""Settle a rate-limit grant once the pipeline's outcome is known.

A JSON answer settles after its response (its `usage`); a stream once it ends: with
its usage chunk when the provider sent one, else the prompt estimate plus tiktoken's
count of the streamed text. A hit (exact, semantic, or a concurrent identical
request's answer) spent no provider tokens.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import anyio

from gateway.limits.service import Grant, RequestLimits
from gateway.pipeline.decision import Decision
from gateway.pipeline.reasons import Layer
from gateway.pipeline.runner import CompletionOutcome, Outcome, StreamOutcome
from gateway.telemetry.records import DecisionRecord


def _total_tokens(usage: Any) -> int | None:
    if not isinstance(usage, Mapping):
        return None
    total = usage.get("total_tokens")
    return total if isinstance(total, int) else None


def _served_from_cache(decision: Decision) -> bool:
    return decision.layer in (Layer.EXACT, Layer.SEMANTIC) or decision.coalesced


def settle_outcome(limits: RequestLimits, grant: Grant, outcome: Outcome, model: str) -> Outcome:
    """`outcome`, settling `grant` when its answer is complete."""
    if not grant.tokens:
        return outcome
    if isinstance(outcome, CompletionOutcome):
        return _settle_completion(limits, grant, outcome)
    return dataclasses.replace(outcome, chunks=_counted(limits, grant, outcome, model))


def _settle_completion(
    limits: RequestLimits, grant: Grant, outcome: CompletionOutcome
) -> CompletionOutcome:
    hit = _served_from_cache(outcome.decision)
    used = _total_tokens(outcome.completion.get("usage"))
    inner = outcome.after_response

    async def after_response() -> DecisionRecord:
        try:
            return await inner()
        finally:
            limits.settle(grant, used, hit=hit)

    return dataclasses.replace(outcome, after_response=after_response)


async def _counted(
    limits: RequestLimits,
    grant: Grant,
    outcome: StreamOutcome,
    model: str,
) -> AsyncGenerator[dict[str, Any], None]:
    chunks = outcome.chunks
    usage: int | None = None
    text: list[str] = []
    try:
        async for chunk in chunks:
            total = _total_tokens(chunk.get("usage"))
            if total is not None:
                usage = total
            for choice in chunk.get("choices") or ():
                content = (choice.get("delta") or {}).get("content")
                if isinstance(content, str):
                    text.append(content)
            yield chunk
    finally:
        # Shielded like the relay's own close: a client disconnect cancels the scope.
        with anyio.CancelScope(shield=True):
            await chunks.aclose()
        if usage is None:
            usage = grant.estimate + limits.count_text(model, "".join(text))
        limits.settle(grant, usage, hit=_served_from_cache(outcome.decision))
