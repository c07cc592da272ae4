"""Request bodies: message and part counts are refused before validation, and large
bodies are parsed and validated off the event loop's thread (small ones in place)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, field_validator

from gateway.api.body_parsing import BodyLimits, BodyParser
from gateway.errors import InvalidRequest
from gateway.testing.fake_provider import FakeProvider

LIMITS = BodyLimits(max_messages=100, max_content_parts=40, offload_above_bytes=4096)


def _parser() -> BodyParser:
    return BodyParser(LIMITS, FakeProvider())


def _chat(messages: list[Any]) -> bytes:
    return orjson.dumps({"model": "m", "messages": messages})


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_messages_up_to_the_limit_are_accepted() -> None:
    body, parsed = _run(_parser().parse_chat(_chat([{"role": "user", "content": "hi"}] * 100)))
    assert len(parsed.messages) == 100 and len(body["messages"]) == 100


def test_more_messages_than_the_limit_are_a_400_naming_messages() -> None:
    with pytest.raises(InvalidRequest) as refused:
        _run(_parser().parse_chat(_chat([{"role": "user", "content": "hi"}] * 101)))
    assert refused.value.status_code == 400
    assert refused.value.param == "messages"
    assert refused.value.code == "array_above_max_length"
    assert "100" in refused.value.message


def test_more_content_parts_in_all_than_the_limit_are_a_400() -> None:
    parts = [{"type": "text", "text": "a"}] * 10
    within = [{"role": "user", "content": parts}] * 4  # 40 parts
    _run(_parser().parse_chat(_chat(within)))
    with pytest.raises(InvalidRequest) as refused:
        _run(_parser().parse_chat(_chat([*within, {"role": "user", "content": parts[:1]}])))
    assert refused.value.param == "messages"
    assert refused.value.code == "array_above_max_length"


def test_counts_are_checked_before_any_message_is_validated() -> None:
    """Too many messages, each of them invalid: the count is what the client hears (the
    per-message validation, the costly part, never ran)."""
    with pytest.raises(InvalidRequest) as refused:
        _run(_parser().parse_chat(_chat([{"role": "wizard"}] * 101)))
    assert refused.value.code == "array_above_max_length"
    with pytest.raises(InvalidRequest) as invalid:
        _run(_parser().parse_chat(_chat([{"role": "wizard"}] * 100)))
    assert invalid.value.param == "messages.0.role"


_SEEN_THREADS: list[int] = []


class _ThreadProbe(BaseModel):
    """Records the thread its validation runs on."""

    text: str

    @field_validator("text")
    @classmethod
    def _where(cls, value: str) -> str:
        _SEEN_THREADS.append(threading.get_ident())
        return value


@pytest.mark.parametrize(
    ("size_bytes", "on_loop_thread"), [(100, True), (4096, True), (4097, False), (10**6, False)]
)
def test_bodies_above_the_threshold_are_validated_in_a_worker_thread(
    size_bytes: int, on_loop_thread: bool
) -> None:
    overhead = len(orjson.dumps({"text": ""}))
    raw = orjson.dumps({"text": "x" * (size_bytes - overhead)})
    assert len(raw) == size_bytes
    _SEEN_THREADS.clear()

    async def parse() -> tuple[int, _ThreadProbe]:
        _, model = await _parser().parse(raw, _ThreadProbe)
        return threading.get_ident(), model

    loop_thread, model = _run(parse())
    assert model.text == "x" * (size_bytes - overhead)
    assert len(_SEEN_THREADS) == 1
    assert (_SEEN_THREADS[0] == loop_thread) is on_loop_thread


def test_the_loop_serves_others_while_a_large_body_is_validated() -> None:
    """While a large body is being validated (here: a validator that waits for a signal),
    other coroutines on the loop run: the signal is sent by one of them."""
    release = threading.Event()

    class Blocking(BaseModel):
        text: str

        @field_validator("text")
        @classmethod
        def _wait(cls, value: str) -> str:
            assert release.wait(timeout=30), "the event loop never ran meanwhile"
            return value

    async def scenario() -> str:
        parser = _parser()
        parsing = asyncio.create_task(parser.parse(orjson.dumps({"text": "y" * 10_000}), Blocking))
        await asyncio.sleep(0)  # the parse has started
        release.set()  # only possible if the loop is free while it validates
        _, model = await parsing
        return model.text

    assert _run(scenario()) == "y" * 10_000
