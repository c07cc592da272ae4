"""Messages and parameters reach the provider as sent (issue 18, item 6): what the fake
upstream received for requests through the real gateway and litellm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import client_for, gateway_with_policies, unique_prompt
from tests.helpers import FakeUpstream, GatewayFactory, RunningGateway, gateway_config_dict


def _deployment(name: str, model: str, upstream: FakeUpstream, **model_info: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "model_name": name,
        "litellm_params": {
            "model": model,
            "api_base": f"{upstream.url}/v1",
            "api_key": "sk-upstream-secret-123456",
        },
    }
    if model_info:
        entry["model_info"] = model_info
    return entry


def _model_list(upstream: FakeUpstream, tmp_path: Path) -> list[dict[str, Any]]:
    default = gateway_config_dict(upstream.url, tmp_path)["model_list"]
    return [
        *default,
        # An OpenAI-compatible server declared to take roles and metadata as sent.
        _deployment("as-sent-model", "openai/fake-model", upstream, request_as_sent=True),
        _deployment("o-series", "openai/o3-mini", upstream, request_as_sent=True),
        # The same o-series name, left to litellm's translation.
        _deployment("o-series-mapped", "openai/o3-mini", upstream),
    ]


@pytest.fixture
def compat_gateway(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> RunningGateway:
    return start_gateway(model_list=_model_list(upstream, tmp_path))


def _received(
    gateway: RunningGateway,
    upstream: FakeUpstream,
    model: str,
    messages: list[dict[str, Any]],
    **extra: Any,
) -> dict[str, Any]:
    prompt = unique_prompt()
    sent = [*messages, {"role": "user", "content": prompt}]
    response = client_for(gateway).chat.completions.create(model=model, messages=sent, **extra)
    if extra.get("stream"):
        assert [c for c in response]  # type: ignore[union-attr]
    return next(b for b in reversed(upstream.log.chat_bodies) if prompt in str(b["messages"]))


DEVELOPER = {"role": "developer", "content": "Answer in one line.", "name": "house_rules"}
SYSTEM = {"role": "system", "content": "You are terse."}


@pytest.mark.parametrize("stream", [False, True])
def test_developer_messages_reach_a_deployment_that_takes_them(
    compat_gateway: RunningGateway, upstream: FakeUpstream, stream: bool
) -> None:
    body = _received(compat_gateway, upstream, "as-sent-model", [DEVELOPER, SYSTEM], stream=stream)
    assert body["messages"][:2] == [DEVELOPER, SYSTEM]


def test_other_openai_compatible_servers_get_litellms_system_role(
    compat_gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    # Not declared to know `developer` (a chat template may not): litellm's mapping.
    body = _received(compat_gateway, upstream, "fake-model", [DEVELOPER])
    assert body["messages"][0] == {"role": "system", "content": DEVELOPER["content"]}


def test_o_series_system_message_stays_a_system_message(
    compat_gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    body = _received(compat_gateway, upstream, "o-series", [SYSTEM, DEVELOPER])
    assert body["model"] == "o3-mini"
    assert body["messages"][:2] == [SYSTEM, DEVELOPER]
    # Left to litellm, its model map moves it into a user turn (documented).
    mapped = _received(compat_gateway, upstream, "o-series-mapped", [SYSTEM])
    assert mapped["messages"][0] == {"role": "user", "content": SYSTEM["content"]}


def test_metadata_reaches_a_deployment_that_takes_it(
    compat_gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    metadata = {"team": "search", "ticket": "none"}
    body = _received(compat_gateway, upstream, "as-sent-model", [], metadata=metadata)
    assert body["metadata"] == metadata
    # Not declared: litellm keeps it as its own logging metadata.
    assert "metadata" not in _received(
        compat_gateway, upstream, "fake-model", [], metadata=metadata
    )


@pytest.mark.parametrize("model", ["fake-model", "o-series", "o-series-mapped"])
def test_parameters_litellm_does_not_know_for_the_model_pass(
    compat_gateway: RunningGateway, upstream: FakeUpstream, model: str
) -> None:
    # `verbosity`: litellm knows no model named fake-model and no verbosity for o3-mini.
    body = _received(compat_gateway, upstream, model, [], verbosity="low")
    assert body["verbosity"] == "low"


def test_policy_drop_leaves_them_out(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"default.yaml": "unknown_params: drop\n"},
        model_list=_model_list(upstream, tmp_path),
    )
    body = _received(gateway, upstream, "o-series", [], verbosity="low", seed=3)
    assert "verbosity" not in body and body["seed"] == 3
