"""`gateway bench --apis`: each API's request body, and the per-API report rows."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.api.anthropic_translation import messages_to_chat
from gateway.api.legacy_translation import LegacyCompletionRequest
from gateway.api.legacy_translation import chat_body as legacy_chat_body
from gateway.api.messages_schema import MessagesRequest
from gateway.api.responses_schema import ResponsesRequest
from gateway.api.responses_translate import check_supported, input_items, to_chat_body
from gateway.api.schemas import ChatCompletionRequest
from gateway_tools.bench.apis import API_NAMES, APIS, parse_apis, rotated
from gateway_tools.bench.constants import EXACT_PROMPT, MODEL
from gateway_tools.bench.measure import Series
from gateway_tools.bench.report.apis import api_failures, api_row, render_api_table, with_reference

QUESTION = EXACT_PROMPT


def _body(name: str) -> dict[str, Any]:
    loaded = orjson.loads(APIS[name].body(QUESTION))
    assert isinstance(loaded, dict)
    return loaded


def _user_turns(chat: dict[str, Any]) -> list[Any]:
    return [m["content"] for m in chat["messages"] if m["role"] == "user"]


def test_the_four_apis_are_the_default_selection() -> None:
    assert API_NAMES == ("chat", "completions", "responses", "messages")
    assert parse_apis("chat,completions,responses,messages") == API_NAMES


def test_chat_body_is_a_valid_chat_request() -> None:
    parsed = ChatCompletionRequest.model_validate(_body("chat"))
    assert parsed.model == MODEL
    assert [(m.role, m.content) for m in parsed.messages] == [("user", QUESTION)]
    assert APIS["chat"].path == "/v1/chat/completions"


def test_completions_body_is_a_valid_legacy_request_for_the_same_question() -> None:
    body = _body("completions")
    parsed = LegacyCompletionRequest.model_validate(body)
    assert APIS["completions"].path == "/v1/completions"
    assert _user_turns(legacy_chat_body(body, parsed)) == [QUESTION]


def test_responses_body_is_a_valid_responses_request_for_the_same_question() -> None:
    body = _body("responses")
    parsed = ResponsesRequest.model_validate(body)
    check_supported(body)
    assert parsed.model == MODEL
    assert APIS["responses"].path == "/v1/responses"
    chat = to_chat_body(body, input_items(body["input"]))
    assert ChatCompletionRequest.model_validate(chat).model == MODEL
    assert _user_turns(chat) == [QUESTION]


def test_messages_body_is_a_valid_messages_request_for_the_same_question() -> None:
    body = _body("messages")
    parsed = MessagesRequest.model_validate(body)
    assert parsed.max_tokens >= 1
    assert APIS["messages"].path == "/v1/messages"
    assert "anthropic-version: " in APIS["messages"].extra_headers
    chat = messages_to_chat(body).body
    texts = [
        part["text"] if isinstance(part, dict) else part
        for content in _user_turns(chat)
        for part in (content if isinstance(content, list) else [content])
    ]
    assert texts == [QUESTION]


@pytest.mark.parametrize("text", ["", "chat,grpc", " , "])
def test_parse_apis_refuses_unknown_or_empty_lists(text: str) -> None:
    with pytest.raises(ValueError, match="chat, completions, responses, messages"):
        parse_apis(text)


def test_parse_apis_keeps_the_canonical_order_once_each() -> None:
    assert parse_apis("messages, chat,messages") == ("chat", "messages")


def test_rotated_puts_each_api_first_in_turn() -> None:
    names = list(API_NAMES)
    firsts = [rotated(names, index)[0] for index in range(len(names))]
    assert firsts == names
    assert sorted(rotated(names, 5)) == sorted(names)


def _series(latencies: list[float], errors: int = 0, wrong_layer: int = 0) -> Series:
    series = Series(latencies_ms=list(latencies), wrong_layer=wrong_layer)
    series.errors = errors
    return series


def test_rows_carry_the_difference_to_chat() -> None:
    direct = {"p50": 10.0, "p99": 12.0}
    rows = with_reference(
        {
            "chat": api_row("chat", _series([1.0, 2.0, 3.0]), _series([14.0]), direct, 1000.0),
            "responses": api_row(
                "responses", _series([2.5, 3.5, 4.5]), _series([15.5]), direct, 800.0
            ),
        }
    )
    chat, responses = rows["chat"], rows["responses"]
    assert chat["vs_chat"]["exact_hit_p50_ms"] == 0.0
    assert responses["exact_hit"]["p50"] == 3.5
    assert responses["miss_overhead"]["p50"] == 5.5
    assert responses["vs_chat"] == {
        "exact_hit_p50_ms": 1.5,
        "exact_hit_p99_ms": 1.5,
        "miss_overhead_p50_ms": 1.5,
        "exact_hits_per_second_ratio": 0.8,
    }
    assert responses["path"] == "/v1/responses"


def test_rows_without_chat_have_no_difference() -> None:
    direct = {"p50": 10.0, "p99": 12.0}
    rows = with_reference(
        {"messages": api_row("messages", _series([2.0]), _series([13.0]), direct, 500.0)}
    )
    assert set(rows["messages"]["vs_chat"].values()) == {None}


def test_the_table_has_one_row_per_api_and_failures_count() -> None:
    direct = {"p50": 10.0, "p99": 12.0}
    rows = with_reference(
        {
            name: api_row(name, _series([1.0, 2.0]), _series([12.0]), direct, 900.0)
            for name in API_NAMES
        }
    )
    section = {
        "reference": "chat",
        "concurrency": 16,
        "direct_upstream": direct,
        "rows": rows,
        "errors": 0,
        "wrong_layer": 2,
    }
    table = render_api_table(section)
    body = [line for line in table if line.startswith("| ") and not line.startswith("| API")]
    assert [line.split("|")[1].strip() for line in body] == list(API_NAMES)
    assert api_failures(section) == [
        "2 per-API answers came from another layer than their phase measures"
    ]
    assert api_failures({**section, "wrong_layer": 0}) == []
