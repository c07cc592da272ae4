"""The provider leaves litellm with no logging callback: litellm's message redaction is
switched off for speed (see `LiteLLMProvider.create`), which is only safe while nothing
inside litellm would receive the prompt."""

from __future__ import annotations

from pathlib import Path

import litellm

from gateway.providers.litellm_provider import LiteLLMProvider
from gateway.settings import GatewayConfig
from tests.conftest import gateway_config_dict

_CALLBACK_LISTS = (
    "callbacks",
    "input_callback",
    "success_callback",
    "failure_callback",
    "service_callback",
    "_async_input_callback",
    "_async_success_callback",
    "_async_failure_callback",
)


def test_creating_the_provider_registers_no_litellm_logging_callback(tmp_path: Path) -> None:
    config = GatewayConfig.model_validate(
        gateway_config_dict("http://127.0.0.1:9", tmp_path / "data")
    )
    provider = LiteLLMProvider.create(config)
    assert provider.has_model("fake-model")
    registered = {name: list(getattr(litellm, name)) for name in _CALLBACK_LISTS}
    assert registered == {name: [] for name in _CALLBACK_LISTS}
    assert litellm.turn_off_message_logging is False
