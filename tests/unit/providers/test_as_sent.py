"""What `as_sent.prepare_call` hands litellm (litellm's own routing helpers, no call)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gateway.providers.as_sent import AS_SENT_PARAM, openai_hosted, prepare_call
from gateway.providers.protocol import DROP_UNKNOWN_PARAMS
from gateway.providers.routing import deployments_from_config
from gateway.settings import ConfigError, parse_config
from tests.helpers import gateway_config_dict

DEVELOPER = {"role": "developer", "content": "Be brief.", "name": "rules"}
USER = {"role": "user", "content": "hi"}


def _call(model: str, api_base: str | None = None, **extra: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"model": model, "messages": [DEVELOPER, USER], **extra}
    if api_base is not None:
        kwargs["api_base"] = api_base
    return kwargs


def test_openai_hosted_gets_roles_and_metadata_as_sent() -> None:
    prepared = prepare_call(_call("openai/gpt-4o", metadata={"a": "b"}))
    assert prepared["extra_body"] == {"messages": [DEVELOPER, USER], "metadata": {"a": "b"}}


def test_other_endpoints_only_when_declared() -> None:
    plain = prepare_call(_call("openai/fake", "http://127.0.0.1:9/v1"))
    assert "extra_body" not in plain
    declared = prepare_call(_call("openai/fake", "http://127.0.0.1:9/v1", **{AS_SENT_PARAM: True}))
    assert AS_SENT_PARAM not in declared
    assert declared["extra_body"] == {"messages": [DEVELOPER, USER]}
    refused = prepare_call(_call("openai/gpt-4o", **{AS_SENT_PARAM: False}))
    assert "extra_body" not in refused


def test_other_providers_keep_litellms_translation() -> None:
    assert "extra_body" not in prepare_call(_call("anthropic/claude-sonnet-4-5", metadata={}))


def test_unknown_params_pass_or_drop() -> None:
    passed = prepare_call(_call("openai/o3-mini", verbosity="low", seed=1, n=1))
    assert passed["allowed_openai_params"] == ["verbosity"]
    dropped = prepare_call(_call("openai/o3-mini", verbosity="low", **{DROP_UNKNOWN_PARAMS: True}))
    assert dropped["drop_params"] is True and DROP_UNKNOWN_PARAMS not in dropped
    assert "allowed_openai_params" not in dropped


def test_openai_hosted_endpoints() -> None:
    assert openai_hosted(None) and openai_hosted("https://api.openai.com/v1")
    assert not openai_hosted("http://127.0.0.1:8000/v1")
    assert not openai_hosted("https://openai.com.example.net/v1")


def test_request_as_sent_must_be_a_boolean(tmp_path: Path) -> None:
    raw = gateway_config_dict("http://127.0.0.1:9", tmp_path)
    raw["model_list"][0]["model_info"] = {"request_as_sent": "yes"}
    with pytest.raises(ConfigError, match="request_as_sent"):
        parse_config(raw)
    raw["model_list"][0]["model_info"] = {"request_as_sent": True}
    config, _ = parse_config(raw)
    deployment = deployments_from_config(config)[0]
    assert deployment.params[AS_SENT_PARAM] is True
