"""One structured log line per request: what the cache did and why. No prompt text."""

from __future__ import annotations

import logging

import orjson

from gateway.pipeline.context import ChatContext

logger = logging.getLogger("gateway.decisions")


def log_decision(ctx: ChatContext, status: int) -> None:
    if not logger.isEnabledFor(logging.INFO):
        return
    record = {
        "request_id": ctx.request_id,
        "tenant": ctx.tenant,
        "model": ctx.model,
        "stream": ctx.stream,
        "layer": ctx.layer.value,
        "reason": ctx.reason.value if ctx.reason else None,
        "stored": ctx.stored,
        "memory_tokens": ctx.memory_tokens,
        "memory_items": ctx.memory_items,
        "memory_note": ctx.memory_note,
        "status": status,
        "total_ms": ctx.elapsed_ms(),
        "stages_ms": ctx.timings_ms,
    }
    logger.info(orjson.dumps(record).decode())
