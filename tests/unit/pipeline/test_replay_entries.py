"""Stored entries and what they can replay, through the pipeline with in-process fakes:
a refusal streamed as OpenAI streams it is stored whole, and an entry that lacks a field
the request asks for (one written before logprobs were kept from streams, or with
another number of choices) is a miss with a reason, then replaced."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from typing import Any

from gateway.auth import Principal
from gateway.completions import StreamAssembler, replay_chunks
from gateway.pipeline.decision import Decision
from gateway.pipeline.exact import ExactCacheStage
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.runner import ChatPipeline, CompletionOutcome, StreamOutcome
from gateway.policy.models import Policy
from gateway.providers.protocol import UpstreamReport
from gateway.storage.protocols import CachedCompletion
from gateway.testing.fake_provider import FakeProvider
from tests.unit.test_pipeline import MemoryCache

REFUSAL = "I can't help with that."
TOKENS = [
    {"token": word, "logprob": -0.5, "bytes": None, "top_logprobs": []}
    for word in ("I", " can't", " help", " with", " that.")
]


def _chunk(delta: dict[str, Any], logprobs: Any = None, finish: str | None = None) -> Any:
    choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [choice],
    }


class RefusingProvider(FakeProvider):
    """Refuses, with refusal logprobs, in JSON and as OpenAI streams it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def complete(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> dict[str, Any]:
        self.calls += 1
        message = {"role": "assistant", "content": None, "refusal": REFUSAL}
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": "stop",
            "logprobs": {"content": None, "refusal": TOKENS},
        }
        return {
            "id": "x",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [choice],
        }

    async def stream(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> AsyncGenerator[dict[str, Any], None]:
        self.calls += 1
        yield _chunk({"role": "assistant", "content": None, "refusal": None})
        for token in TOKENS:
            yield _chunk({"refusal": token["token"]}, {"content": None, "refusal": [token]})
        yield _chunk({}, None, "stop")


def _context(stream: bool = False, **params: Any) -> ChatRequest:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": stream,
        **params,
    }
    return ChatRequest(
        request_id="r", principal=Principal("acme"), model="m", body=body, policy=Policy()
    )


async def _answer(pipeline: ChatPipeline, ctx: ChatRequest) -> tuple[dict[str, Any], Decision]:
    """What the client gets, as one completion (a stream assembled as a client would),
    and the pipeline's decision."""
    outcome = await pipeline.handle(ctx)
    if isinstance(outcome, StreamOutcome):
        assembler = StreamAssembler()
        async for chunk in outcome.chunks:
            assembler.add(chunk)
        return assembler.completion(), outcome.decision
    assert isinstance(outcome, CompletionOutcome)
    await outcome.after_response()
    if not ctx.stream:
        return outcome.completion, outcome.decision
    assembler = StreamAssembler()
    for chunk in replay_chunks(outcome.completion, completion_id="r", include_usage=False):
        assembler.add(chunk)
    return assembler.completion(), outcome.decision


async def test_a_streamed_refusal_is_stored_and_replayed_in_both_modes() -> None:
    provider = RefusingProvider()
    pipeline = ChatPipeline(provider, ExactCacheStage(MemoryCache()))
    await _answer(pipeline, _context(stream=True, logprobs=True))
    for stream in (False, True):
        ctx = _context(stream=stream, logprobs=True)
        answer, decision = await _answer(pipeline, ctx)
        choice = answer["choices"][0]
        assert decision.layer is Layer.EXACT
        assert choice["message"]["refusal"] == REFUSAL and choice["message"]["content"] is None
        assert choice["logprobs"]["refusal"] == TOKENS
    assert provider.calls == 1


async def test_an_entry_without_the_logprobs_asked_for_is_a_miss_and_is_replaced() -> None:
    provider, cache = RefusingProvider(), MemoryCache()
    stage = ExactCacheStage(cache)
    pipeline = ChatPipeline(provider, stage)
    # As the previous version stored a streamed answer: logprobs dropped.
    old = await provider.complete({})
    old["choices"][0].pop("logprobs")
    asked = _context(logprobs=True)
    cache.entries[asked.exact_key] = CachedCompletion(old, "acme", "m", time.time())

    _, decision = await _answer(pipeline, asked)
    assert (decision.layer, decision.reason) == (Layer.MISS, Reason.REPLAY_INCOMPLETE)
    assert provider.calls == 2  # one for `old`, one for this request
    again = _context(logprobs=True)
    answer, decision = await _answer(pipeline, again)
    choice = answer["choices"][0]
    assert decision.layer is Layer.EXACT and choice["logprobs"]["refusal"] == TOKENS


async def test_an_entry_with_another_number_of_choices_is_a_miss() -> None:
    provider, cache = RefusingProvider(), MemoryCache()
    stage = ExactCacheStage(cache)
    pipeline = ChatPipeline(provider, stage)
    two = await provider.complete({})
    two["choices"].append({**two["choices"][0], "index": 1})
    ctx = _context()
    cache.entries[ctx.exact_key] = CachedCompletion(two, "acme", "m", time.time())
    _, decision = await _answer(pipeline, ctx)
    assert (decision.layer, decision.reason) == (Layer.MISS, Reason.REPLAY_INCOMPLETE)
