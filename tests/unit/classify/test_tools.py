"""Tools that act make a request a write; read-only tools do not."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.classify.classifier import ClassifierSettings, NonCacheableClass, RequestClassifier
from gateway.classify.tools import ToolInspector

QUESTION = [{"role": "user", "content": "What should I tell the customer?"}]


def function(name: str, description: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "parameters": {"type": "object", "properties": {}}}
    if description is not None:
        spec["description"] = description
    return {"type": "function", "function": spec}


@pytest.mark.parametrize(
    "name",
    [
        "send_email",
        "create_ticket",
        "delete_user",
        "update_profile",
        "book_flight",
        "transfer_funds",
        "cancel_order",
        "payInvoice",
        "refund_payment",
        "orders.cancel",
    ],
)
def test_acting_tool_names(name: str) -> None:
    assert ToolInspector().tool_acts(function(name))


@pytest.mark.parametrize(
    "name",
    [
        "get_weather",
        "search_docs",
        "get_order_status",
        "order_status",
        "weather_lookup",
        "translate_text",
        "text_to_speech",
        "user_email",
    ],
)
def test_read_only_tool_names(name: str) -> None:
    assert not ToolInspector().tool_acts(function(name))


def test_description_decides_when_the_name_does_not() -> None:
    inspector = ToolInspector()
    assert inspector.tool_acts(function("notifier", "Sends a push notification to a user"))
    assert not inspector.tool_acts(function("calculator", "Evaluates an arithmetic expression"))


def test_acting_tools_make_the_request_a_write(classifier: RequestClassifier) -> None:
    verdict = classifier.classify(QUESTION, [function("send_email")], "auto", ClassifierSettings())
    assert verdict.reason is NonCacheableClass.WRITE_INTENT
    assert verdict.rule == "tools.acting"


def test_read_only_tools_leave_the_request_cacheable(classifier: RequestClassifier) -> None:
    verdict = classifier.classify(QUESTION, [function("get_weather")], "auto", ClassifierSettings())
    assert verdict.cacheable


def test_tool_choice_none_means_no_tool_can_act(classifier: RequestClassifier) -> None:
    verdict = classifier.classify(QUESTION, [function("send_email")], "none", ClassifierSettings())
    assert verdict.cacheable


def test_a_forced_read_only_function_cannot_act(classifier: RequestClassifier) -> None:
    tools = [function("get_weather"), function("send_email")]
    forced = {"type": "function", "function": {"name": "get_weather"}}
    assert classifier.classify(QUESTION, tools, forced, ClassifierSettings()).cacheable
    forced = {"type": "function", "function": {"name": "send_email"}}
    assert not classifier.classify(QUESTION, tools, forced, ClassifierSettings()).cacheable


def test_an_identifier_is_reported_before_the_acting_tool(classifier: RequestClassifier) -> None:
    messages = [{"role": "user", "content": "Email the report to ana@example.com"}]
    verdict = classifier.classify(messages, [function("send_email")], None, ClassifierSettings())
    assert verdict.reason is NonCacheableClass.ENTITY_ID


def test_disabled_writes_ignore_acting_tools(classifier: RequestClassifier) -> None:
    settings = ClassifierSettings(
        enabled=frozenset(NonCacheableClass) - {NonCacheableClass.WRITE_INTENT}
    )
    assert classifier.classify(QUESTION, [function("send_email")], "auto", settings).cacheable


def test_malformed_tools_are_ignored(classifier: RequestClassifier) -> None:
    tools: list[Any] = [None, "send_email", {"type": "function"}, {"function": "x"}]
    assert classifier.classify(
        QUESTION, tools, {"type": "function"}, ClassifierSettings()
    ).cacheable
