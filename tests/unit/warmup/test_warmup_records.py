"""Import-file lines -> recorded pairs or refusal reasons; progress lines; a failing
record does not end the import."""

from __future__ import annotations

import asyncio
import io
from typing import Any, cast

import orjson
import pytest

from gateway.warmup.importer import PairImporter, _import_one
from gateway.warmup.progress import Progress
from gateway.warmup.records import RecordedPair, RecordError, Refusal, parse_line

BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}]}
COMPLETION = {
    "object": "chat.completion",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}}],
}


def _line(record: Any) -> bytes:
    return orjson.dumps(record)


def _refusal(line: bytes) -> Refusal:
    with pytest.raises(RecordError) as caught:
        parse_line(line)
    return caught.value.refusal


def test_request_response_pair() -> None:
    pair = parse_line(_line({"request": BODY, "response": COMPLETION}))
    assert pair.body == BODY
    assert pair.completion["choices"][0]["message"]["content"] == "Hello"


def test_batch_output_line_with_its_request() -> None:
    record = {
        "custom_id": "a",
        "url": "/v1/chat/completions",
        "body": BODY,
        "response": {"status_code": 200, "body": COMPLETION},
        "error": None,
    }
    assert parse_line(_line(record)).completion == COMPLETION


def test_streamed_chunks_are_joined() -> None:
    chunks = [
        {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Hel"}}]},
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}],
        },
    ]
    pair = parse_line(_line({"request": BODY, "response": chunks}))
    assert pair.completion["choices"][0]["message"]["content"] == "Hello"
    assert pair.completion["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize(
    ("record", "refusal"),
    [
        ({"request": BODY, "response": COMPLETION, "status_code": 500}, Refusal.ERROR),
        ({"request": BODY, "response": {"error": {"message": "x"}}}, Refusal.ERROR),
        ({"request": BODY, "response": COMPLETION, "error": {"code": "x"}}, Refusal.ERROR),
        (
            {"request": BODY, "response": [{"error": {"message": "broke off"}}]},
            Refusal.ERROR,
        ),
        (
            {"body": BODY, "response": {"status_code": 429, "body": {"error": {}}}},
            Refusal.ERROR,
        ),
        ({"body": BODY, "response": None, "error": {"code": "batch_expired"}}, Refusal.ERROR),
        (
            {"url": "/v1/embeddings", "body": BODY, "response": {"body": COMPLETION}},
            Refusal.UNSUPPORTED_ENDPOINT,
        ),
        ({"request": BODY, "response": {"object": "list", "data": []}}, Refusal.INVALID_RESPONSE),
        ({"request": BODY}, Refusal.INVALID_RESPONSE),
        ({"request": "text", "response": COMPLETION}, Refusal.INVALID_RECORD),
        ({"prompt": "Hi", "completion": "Hello"}, Refusal.INVALID_RECORD),
        ([BODY, COMPLETION], Refusal.INVALID_RECORD),
    ],
)
def test_refused_records(record: Any, refusal: Refusal) -> None:
    assert _refusal(_line(record)) is refusal


def test_a_line_that_is_not_json() -> None:
    assert _refusal(b'{"request": {') is Refusal.INVALID_JSON


def test_progress_writes_at_most_one_line_per_interval() -> None:
    now = [0.0]
    stream = io.StringIO()
    progress = Progress(stream, interval_seconds=1.0, clock=lambda: now[0])
    for records in range(1, 2001):
        now[0] = records / 1000  # 1,000 records per second
        progress.update(records, records // 2, records * 10, 20_000)
    lines = stream.getvalue().splitlines()
    assert lines == [
        "import: 1000 records (50 %), 500 stored, 500 refused, 1000 records/s",
        "import: 2000 records (100 %), 1000 stored, 1000 refused, 1000 records/s",
    ]


def test_no_stream_no_progress() -> None:
    Progress(None).update(1, 1, 1, 1)  # nothing to write to, nothing raised


def test_an_unexpected_failure_refuses_that_record_only() -> None:
    class Failing:
        async def import_pair(self, pair: RecordedPair, line_number: int) -> str | None:
            raise KeyError("secret prompt text")

    pair = RecordedPair(body=BODY, completion=COMPLETION)
    reason = asyncio.run(_import_one(cast(PairImporter, Failing()), pair, 7))
    assert reason is Refusal.IMPORT_FAILED
