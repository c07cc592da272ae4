"""Parsing and validating request bodies without holding up other requests.

A body of tens of thousands of messages holds the event loop long enough to raise
every other tenant's p99 many times over (see docs/measurements.md#large-bodies).
So: a chat body's message and content-part counts are checked on the parsed JSON before
any message is validated (too many: a 400 at the cost of the parse alone), and bodies
larger than `offload_above_bytes` are parsed and validated in a worker thread, one at a
time, while the event loop keeps serving everyone else. Small bodies, almost all of
them, are parsed in place: a thread hop costs more than their parse.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread

from gateway.api.count_scan import exceeded_limit, may_exceed
from gateway.api.schemas import (
    ChatCompletionRequest,
    ModelT,
    check_chat_counts,
    parse_body,
    too_many_content_parts,
    too_many_messages,
)
from gateway.providers.protocol import RequestRules
from gateway.settings import ServerSettings

# Big bodies are parsed one at a time: a flood of them queues here, behind each other,
# instead of taking the default thread pool (and more of the CPU) from everyone else.
_PARSER_THREADS = 1


@dataclass(frozen=True, slots=True)
class BodyLimits:
    max_messages: int
    max_content_parts: int
    offload_above_bytes: int

    @classmethod
    def from_settings(cls, server: ServerSettings) -> BodyLimits:
        return cls(
            max_messages=server.max_messages,
            max_content_parts=server.max_content_parts,
            offload_above_bytes=server.parse_in_thread_above_bytes,
        )


class BodyParser:
    """Built in the app's lifespan (its thread limiter belongs to the running loop).
    `rules`: the provider's (which request parameters it reserves, see `parse_body`)."""

    def __init__(self, limits: BodyLimits, rules: RequestRules) -> None:
        self.limits = limits
        self._rules = rules
        self._limiter = anyio.CapacityLimiter(_PARSER_THREADS)

    async def parse(self, raw: bytes, schema: type[ModelT]) -> tuple[dict[str, Any], ModelT]:
        work = functools.partial(parse_body, raw, schema, rules=self._rules)
        return await self._run(work, len(raw))

    async def parse_chat(self, raw: bytes) -> tuple[dict[str, Any], ChatCompletionRequest]:
        work = functools.partial(_parse_chat, raw, self.limits, self._rules)
        return await self._run(work, len(raw))

    async def _run(
        self, work: functools.partial[tuple[dict[str, Any], ModelT]], size_bytes: int
    ) -> tuple[dict[str, Any], ModelT]:
        if size_bytes <= self.limits.offload_above_bytes:
            return work()
        return await anyio.to_thread.run_sync(work, limiter=self._limiter)


def _parse_chat(
    raw: bytes, limits: BodyLimits, rules: RequestRules
) -> tuple[dict[str, Any], ChatCompletionRequest]:
    max_messages, max_parts = limits.max_messages, limits.max_content_parts
    if len(raw) > limits.offload_above_bytes and may_exceed(raw, max_messages, max_parts):
        # Likely over a limit: proven by a walk that yields the interpreter lock (the
        # parse below would hold it throughout) and stops at the limit.
        exceeded = exceeded_limit(raw, max_messages, max_parts)
        if exceeded == "messages":
            raise too_many_messages(max_messages)
        if exceeded == "content_parts":
            raise too_many_content_parts(max_parts)
    precheck = functools.partial(
        check_chat_counts, max_messages=max_messages, max_content_parts=max_parts
    )
    return parse_body(raw, ChatCompletionRequest, precheck, rules=rules)
