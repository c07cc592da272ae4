from __future__ import annotations

from typing import Any

from gateway.completions import (
    StreamAssembler,
    finished_normally,
    normalise_completion,
    replay_chunks,
    replay_gap,
)

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
    assert rebuilt["choices"] == normalise_completion(COMPLETION)["choices"]
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


def _token(text: str, logprob: float) -> dict[str, Any]:
    alternative = {"token": text, "logprob": logprob, "bytes": list(text.encode())}
    return {**alternative, "top_logprobs": [alternative]}


# An answer with every field a replay used to lose: token logprobs, a URL citation and
# (in the second choice) a refusal with its own logprobs.
RICH: dict[str, Any] = {
    "id": "chatcmpl-rich",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Paris is",
                "annotations": [
                    {
                        "type": "url_citation",
                        "url_citation": {
                            "start_index": 0,
                            "end_index": 5,
                            "title": "Paris",
                            "url": "https://example.com/paris",
                        },
                    }
                ],
            },
            "logprobs": {"content": [_token("Paris", -0.1), _token(" is", -0.2)], "refusal": None},
            "finish_reason": "stop",
        },
        {
            "index": 1,
            "message": {"role": "assistant", "content": None, "refusal": "No."},
            "logprobs": {"content": None, "refusal": [_token("No.", -0.3)]},
            "finish_reason": "stop",
        },
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
}


def test_replay_and_assembly_keep_logprobs_annotations_and_refusal() -> None:
    chunks = replay_chunks(RICH, completion_id="chatcmpl-2", include_usage=False)
    assert assemble(chunks)["choices"] == RICH["choices"]
    # What a streaming client sees: the text's logprobs on the text's chunk, the
    # refusal's on the refusal's, the citation in a delta of its own.
    deltas = [(c["choices"][0]["delta"], c["choices"][0]["logprobs"]) for c in chunks]
    assert (
        {"content": "Paris is"},
        {"content": RICH["choices"][0]["logprobs"]["content"], "refusal": None},
    ) in deltas
    assert (
        {"refusal": "No."},
        {"refusal": RICH["choices"][1]["logprobs"]["refusal"], "content": None},
    ) in deltas
    assert ({"annotations": RICH["choices"][0]["message"]["annotations"]}, None) in deltas


def test_assembler_joins_logprobs_and_annotations_as_openai_streams_them() -> None:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], logprobs: Any = None, finish: str | None = None) -> Any:
        choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
        return {**base, "choices": [choice]}

    citation = RICH["choices"][0]["message"]["annotations"][0]
    completion = assemble(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Paris"}, {"content": [_token("Paris", -0.1)], "refusal": None}),
            chunk({"content": " is"}, {"content": [_token(" is", -0.2)], "refusal": None}),
            chunk({"annotations": [citation]}),
            chunk({}, None, "stop"),
        ]
    )
    assert completion["choices"] == RICH["choices"][:1]


def test_a_refusal_is_an_answer() -> None:
    refusal = {"choices": [RICH["choices"][1]]}
    assert finished_normally(refusal, ["stop"])


def test_normalised_form_is_the_same_from_json_and_from_a_stream() -> None:
    plain = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"content": "hi"}, "finish_reason": "stop"}],
    }
    streamed = assemble(replay_chunks(plain, completion_id="c", include_usage=False))
    assert normalise_completion(plain)["choices"] == normalise_completion(streamed)["choices"]
    assert normalise_completion(plain)["choices"][0] == {
        "index": 0,
        "message": {"role": "assistant", "content": "hi"},
        "logprobs": None,
        "finish_reason": "stop",
    }


def test_replay_gap_names_what_an_entry_cannot_reproduce() -> None:
    one = {**RICH, "choices": RICH["choices"][:1]}
    assert replay_gap(one, {"logprobs": True, "top_logprobs": 1}) is None
    assert replay_gap(one, {}) is None
    # An entry stored without logprobs (e.g. from a stream by an older version).
    bare = {**one, "choices": [{**one["choices"][0], "logprobs": None}]}
    assert replay_gap(bare, {"logprobs": True}) == "logprobs"
    assert replay_gap(bare, {"logprobs": False}) is None
    no_alternatives = {"content": [{"token": "Paris", "logprob": -0.1, "top_logprobs": []}]}
    thin = {**one, "choices": [{**one["choices"][0], "logprobs": no_alternatives}]}
    assert replay_gap(thin, {"logprobs": True}) is None
    assert replay_gap(thin, {"logprobs": True, "top_logprobs": 2}) == "logprobs"
    # The refusal's logprobs count too.
    refusal_only = {"choices": [{**RICH["choices"][1], "logprobs": {"content": None}}]}
    assert replay_gap(refusal_only, {"logprobs": True}) == "logprobs"
    # n choices asked, another number stored.
    assert replay_gap(RICH, {}) == "choices"
    assert replay_gap(RICH, {"n": 2}) is None
    assert replay_gap(one, {"n": 2}) == "choices"
    # Text needs its logprobs; tool calls alone carry none, even when asked for.
    assert replay_gap(COMPLETION, {"logprobs": True}) == "logprobs"
    message = {**COMPLETION["choices"][0]["message"], "content": None}
    tools_only = {"choices": [{**COMPLETION["choices"][0], "message": message}]}
    assert replay_gap(tools_only, {"logprobs": True}) is None
