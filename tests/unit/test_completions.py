from __future__ import annotations

from typing import Any

from gateway.completions import StreamAssembler, finished_normally, replay_chunks

COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Paris is the capital.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"city": "Paris"}'},
                    },
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
}


def assemble(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    assembler = StreamAssembler()
    for chunk in chunks:
        assembler.add(chunk)
    return assembler.completion()


def test_replay_then_assemble_round_trips() -> None:
    chunks = replay_chunks(COMPLETION, completion_id="chatcmpl-2", include_usage=True)
    rebuilt = assemble(chunks)
    assert rebuilt["choices"] == COMPLETION["choices"]
    assert rebuilt["usage"] == COMPLETION["usage"]
    assert all(c["id"] == "chatcmpl-2" and c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[-1]["choices"] == []


def test_usage_chunk_only_when_asked() -> None:
    chunks = replay_chunks(COMPLETION, completion_id="x", include_usage=False)
    assert all("usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_assembler_joins_split_tool_call_arguments() -> None:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    call_start = {
        "index": 0,
        "id": "call_9",
        "type": "function",
        "function": {"name": "get", "arguments": '{"a"'},
    }
    call_rest = {"index": 0, "function": {"arguments": ": 1}"}}
    completion = assemble(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [call_start]}),
            chunk({"tool_calls": [call_rest]}),
            chunk({}, "tool_calls"),
        ]
    )
    message = completion["choices"][0]["message"]
    assert message["content"] is None
    assert message["tool_calls"] == [
        {"id": "call_9", "type": "function", "function": {"name": "get", "arguments": '{"a": 1}'}}
    ]


def test_finished_normally() -> None:
    allowed = {"stop", "tool_calls"}
    assert finished_normally(COMPLETION, allowed)
    truncated = {**COMPLETION, "choices": [{**COMPLETION["choices"][0], "finish_reason": "length"}]}
    assert not finished_normally(truncated, allowed)
    assert not finished_normally({**COMPLETION, "choices": []}, allowed)
    assert not finished_normally(assemble([]), allowed)


def test_an_empty_answer_is_not_a_normal_finish() -> None:
    from gateway.completions import finished_normally

    def completion(message: dict[str, object]) -> dict[str, object]:
        return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}

    allowed = ["stop", "tool_calls"]
    assert finished_normally(completion({"role": "assistant", "content": "hi"}), allowed)
    assert not finished_normally(completion({"role": "assistant", "content": None}), allowed)
    assert not finished_normally(completion({"role": "assistant", "content": ""}), allowed)
    tool = {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}
    assert finished_normally(completion(tool), allowed)
