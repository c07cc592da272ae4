"""Task state over HTTP on both backends: the API, injection for `x-gateway-task`
(exact key: 124 is not 123), archiving, and the working-memory budget, asserting what
the fake upstream received."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx

from gateway.tasks.block import TASK_OPEN
from tests.e2e.helpers import client_for, gateway_with_policies, unique_prompt
from tests.helpers import (
    TENANT_KEYS,
    FakeUpstream,
    GatewayFactory,
    RunningGateway,
    gateway_config_dict,
)


def _api(
    gateway: RunningGateway, method: str, path: str, user: str, **kwargs: Any
) -> httpx.Response:
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}", "x-gateway-user": user}
    return httpx.request(method, f"{gateway.base_url}{path}", headers=headers, timeout=30, **kwargs)


def _ask(gateway: RunningGateway, user: str, task: str | None, messages: list[Any]) -> Any:
    headers = {"x-gateway-user": user}
    if task is not None:
        headers["x-gateway-task"] = task
    return client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model", messages=messages, extra_headers=headers
    )


def _forwarded(upstream: FakeUpstream, text: str) -> list[dict[str, Any]]:
    for body in reversed(upstream.log.chat_bodies):
        if any(text in str(m.get("content")) for m in body["messages"]):
            return list(body["messages"])
    raise AssertionError("not forwarded")


def _task_blocks(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m["content"]) for m in messages if TASK_OPEN in str(m.get("content"))]


def test_task_create_patch_read_list_delete(gateway: RunningGateway) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    created = _api(
        gateway,
        "PUT",
        "/tasks/order_id=123",
        user,
        json={"goal": "Refund order 123", "constraints": ["no store credit"]},
    )
    assert created.status_code == 201, created.text
    assert created.json()["status"] == "open" and created.json()["revision"] == 1
    again = _api(gateway, "POST", "/tasks/order_id=123", user, json={"goal": "x"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "task_exists"

    patched = _api(
        gateway,
        "PATCH",
        "/tasks/order_id=123",
        user,
        json={
            "decisions": {"append": ["refund to the original card"]},
            "constraints": {"remove": ["no store credit"], "append": ["within 5 days"]},
            "open_questions": ["was it shipped?"],
        },
    )
    assert patched.status_code == 200, patched.text
    task = _api(gateway, "GET", "/tasks/order_id=123", user).json()
    assert task["goal"] == "Refund order 123"
    assert task["constraints"] == ["within 5 days"]
    assert task["decisions"] == ["refund to the original card"]
    assert task["open_questions"] == ["was it shipped?"]
    assert task["revision"] == 2

    # Another user of the tenant sees nothing.
    assert _api(gateway, "GET", "/tasks/order_id=123", "someone-else").status_code == 404
    bad = _api(gateway, "PATCH", "/tasks/order_id=123", user, json={"goal": None})
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
    too_many = _api(
        gateway,
        "PATCH",
        "/tasks/order_id=123",
        user,
        json={
            "artifacts": {"append": [f"a{i}" for i in range(100)]},
            "decisions": {"append": ["d"] * 100},
        },
    )
    assert too_many.status_code == 400 and too_many.json()["error"]["code"] == "task_too_large"

    _api(gateway, "PUT", "/tasks/ticket-7", user, json={"goal": "Close ticket", "status": "done"})
    listed = _api(gateway, "GET", "/tasks", user, params={"status": "open"}).json()["data"]
    assert [t["id"] for t in listed] == ["order_id=123"]
    deleted = _api(gateway, "DELETE", "/tasks/order_id=123", user)
    assert deleted.json() == {"id": "order_id=123", "object": "task.deleted", "deleted": True}
    assert _api(gateway, "GET", "/tasks/order_id=123", user).status_code == 404


def test_named_task_is_injected_by_exact_key_and_never_cached(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    _api(gateway, "PUT", "/tasks/order_id=123", user, json={"goal": "Refund order 123 to Visa"})
    _api(gateway, "PUT", "/tasks/order_id=124", user, json={"goal": "Replace order 124"})
    question = unique_prompt("What should I do next?")
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": question}]

    raw = _ask(gateway, user, "order_id=123", messages)
    assert raw.headers["x-gateway-task-outcome"] == "injected"
    assert (raw.headers["x-gateway-cache"], raw.headers["x-gateway-cache-reason"]) == (
        "bypass",
        "task_state",
    )
    forwarded = _forwarded(upstream, question)
    (block,) = _task_blocks(forwarded)
    assert "Refund order 123 to Visa" in block and "124" not in block
    assert forwarded[0] == {"role": "system", "content": "Be brief."}
    assert forwarded[-1] == {"role": "user", "content": question}  # block just before it

    raw = _ask(gateway, user, "order_id=124", messages)
    (block,) = _task_blocks(_forwarded(upstream, question))
    assert "Replace order 124" in block and "Refund" not in block
    assert raw.headers["x-gateway-cache"] == "bypass"  # not served 123's answer

    unknown = _ask(gateway, user, "order_id=125", messages)
    assert unknown.headers["x-gateway-task-outcome"] == "not_found"
    assert _task_blocks(_forwarded(upstream, question)) == []


def test_archived_after_done_is_readable_but_not_injected(
    start_gateway: GatewayFactory, tmp_path: Path, upstream: FakeUpstream
) -> None:
    gateway, _ = gateway_with_policies(
        start_gateway, tmp_path, {"default.yaml": "tasks:\n  archive_after_done_seconds: 0\n"}
    )
    user = f"u-{uuid.uuid4().hex[:8]}"
    _api(gateway, "PUT", "/tasks/t1", user, json={"goal": "Ship release seven"})
    assert _api(gateway, "PATCH", "/tasks/t1", user, json={"status": "done"}).status_code == 200
    hidden = _api(gateway, "GET", "/tasks/t1", user)
    assert hidden.status_code == 404 and hidden.json()["error"]["code"] == "task_archived"
    shown = _api(gateway, "GET", "/tasks/t1", user, params={"include_archived": "true"})
    assert shown.json()["archived"] is True and shown.json()["status"] == "done"
    assert _api(gateway, "GET", "/tasks", user).json()["data"] == []
    question = unique_prompt("Anything left to do?")
    raw = _ask(gateway, user, "t1", [{"role": "user", "content": question}])
    assert raw.headers["x-gateway-task-outcome"] == "archived"
    assert _task_blocks(_forwarded(upstream, question)) == []


def _small_window_gateway(
    start_gateway: GatewayFactory, tmp_path: Path, upstream: FakeUpstream, policy: str
) -> RunningGateway:
    models = gateway_config_dict(upstream.url, tmp_path)["model_list"]
    small = {**models[0], "model_name": "small-model", "model_info": {"max_input_tokens": 2000}}
    gateway, _ = gateway_with_policies(
        start_gateway, tmp_path, {"default.yaml": policy}, model_list=[*models, small]
    )
    return gateway


def _long_conversation(question: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You help with builds."}]
    for turn in range(40):
        messages.append({"role": "user", "content": f"Turn {turn}: " + "tell me more " * 20})
        messages.append({"role": "assistant", "content": f"Answer {turn}: " + "details " * 20})
    messages.append(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "logs", "arguments": "{}"},
                }
            ],
        }
    )
    messages.append({"role": "tool", "tool_call_id": "call_1", "content": "log line " * 2000})
    messages.append({"role": "user", "content": question})
    return messages


def test_budget_on_windows_and_truncates_within_the_window(
    start_gateway: GatewayFactory, tmp_path: Path, upstream: FakeUpstream
) -> None:
    from gateway.memory.tokens import Tokenizers

    gateway = _small_window_gateway(
        start_gateway, tmp_path, upstream, "working_memory:\n  enabled: true\n"
    )
    question = unique_prompt("Why did the build fail?")
    messages = _long_conversation(question)
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="small-model", messages=messages
    )
    assert int(raw.headers["x-gateway-dropped-messages"]) > 0
    assert raw.headers["x-gateway-truncated-tool-results"] == "1"
    forwarded = _forwarded(upstream, question)
    counter = Tokenizers().for_model("gpt-4o-mini")
    assert counter.count_messages(forwarded) <= 2000 - 200  # window - output reserve
    assert forwarded[0] == messages[0] and forwarded[-1] == messages[-1]
    tool = next(m for m in forwarded if m["role"] == "tool")
    assert "[... truncated " in tool["content"] and " tokens ...]" in tool["content"]
    # The tool result kept its call: the assistant message with tool_calls precedes it.
    assert forwarded[forwarded.index(tool) - 1].get("tool_calls")


def test_budget_off_forwards_the_conversation_untouched(
    start_gateway: GatewayFactory, tmp_path: Path, upstream: FakeUpstream
) -> None:
    gateway = _small_window_gateway(start_gateway, tmp_path, upstream, "version: '1'\n")
    question = unique_prompt("Why did the build fail?")
    messages = _long_conversation(question)
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="small-model", messages=messages
    )
    assert "x-gateway-dropped-messages" not in raw.headers
    assert _forwarded(upstream, question) == messages
