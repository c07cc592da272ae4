"""The provider leaves litellm with no logging callback: litellm's message redaction is
switched off for speed (see `LiteLLMProvider.create`), which is only safe while nothing
inside litellm would receive the prompt. Its start-up warm-up never leaves the host."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import litellm

from gateway.providers.litellm_provider import LiteLLMProvider
from gateway.providers.protocol import ChatProvider
from gateway.providers.routing import DeploymentRouter
from gateway.settings import GatewayConfig, RouterSettings
from tests.helpers import gateway_config_dict

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


def test_warm_up_is_a_mocked_call_that_cannot_leave_the_host() -> None:
    calls: list[dict[str, Any]] = []

    async def completion(**kwargs: Any) -> None:
        calls.append(kwargs)

    provider = LiteLLMProvider(DeploymentRouter([], RouterSettings()), completion, completion)
    asyncio.run(provider.warm_up())
    (call,) = calls
    assert call["mock_response"] == "ok"
    assert call["api_base"].startswith("http://127.0.0.1:9/")


def test_a_failing_warm_up_does_not_stop_start_up() -> None:
    async def completion(**kwargs: Any) -> None:
        raise RuntimeError("no such provider")

    provider = LiteLLMProvider(DeploymentRouter([], RouterSettings()), completion, completion)
    asyncio.run(provider.warm_up())  # logged, not raised


def test_the_real_warm_up_reaches_no_server(tmp_path: Path) -> None:
    # Through litellm itself: the mocked answer comes back without any connection (port
    # 9 refuses one, which would raise and be logged instead).
    config = GatewayConfig.model_validate(
        gateway_config_dict("http://127.0.0.1:9", tmp_path / "data")
    )
    provider = LiteLLMProvider.create(config)
    answers: list[Any] = []
    real = provider._completion

    async def spy(**kwargs: Any) -> Any:
        answers.append(await real(**kwargs))
        return answers[-1]

    provider._completion = spy
    asyncio.run(provider.warm_up())
    assert answers and answers[0].choices[0].message.content == "ok"


def test_the_provider_describes_itself_from_litellms_maps(tmp_path: Path) -> None:
    config = GatewayConfig.model_validate(
        gateway_config_dict("http://127.0.0.1:9", tmp_path / "data")
    )
    provider: ChatProvider = LiteLLMProvider.create(config)
    # Reserved: litellm's own keyword arguments and prefixes; OpenAI fields are not.
    for name in ("api_base", "api_key", "mock_response", "timeout", "litellm_logging_obj"):
        assert provider.reserved_parameter(name), name
    for name in ("temperature", "metadata", "user", "messages"):
        assert not provider.reserved_parameter(name), name
    assert {"text", "image_url"} <= provider.user_content_part_types()
    # Context windows and prices from litellm's bundled model map.
    window = provider.context_window("gpt-4o")
    assert window is not None and window > 100_000
    assert provider.context_window("no-such-model-anywhere") is None
    assert provider.cost_usd("gpt-4o", 1000, 1000) > 0
    assert provider.cost_usd("no-such-model-anywhere", 1000, 1000) == 0.0
