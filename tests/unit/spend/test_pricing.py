"""Prices: litellm's map by the deployment's litellm model, or the config's
`model_info` prices per side."""

from __future__ import annotations

import pytest

from gateway.settings import ConfigError, parse_config
from gateway.spend.pricing import Pricer


def _config(model_info: dict[str, object] | None) -> dict[str, object]:
    deployment: dict[str, object] = {
        "model_name": "chat",
        "litellm_params": {"model": "openai/gpt-4o-mini"},
    }
    if model_info is not None:
        deployment["model_info"] = model_info
    return {"model_list": [deployment]}


def _price_map(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    assert model == "openai/gpt-4o-mini"  # priced by the litellm model, not the alias
    return prompt_tokens * 1e-6 + completion_tokens * 4e-6


def test_without_config_prices_the_price_map_prices() -> None:
    config, _ = parse_config(_config(None))
    pricer = Pricer.from_config(config, _price_map)
    assert pricer.cost_usd("chat", 100, 10) == pytest.approx(100e-6 + 40e-6)


def test_config_prices_replace_the_map_per_side() -> None:
    config, _ = parse_config(_config({"input_cost_per_token": 0.5, "output_cost_per_token": 2}))
    assert Pricer.from_config(config, _price_map).cost_usd("chat", 3, 1) == pytest.approx(3.5)
    config, _ = parse_config(_config({"output_cost_per_token": 0.0}))
    assert Pricer.from_config(config, _price_map).cost_usd("chat", 100, 10) == pytest.approx(100e-6)


@pytest.mark.parametrize("bad", [-1, "cheap", True])
def test_config_prices_must_be_numbers_at_or_above_zero(bad: object) -> None:
    with pytest.raises(ConfigError, match="input_cost_per_token"):
        parse_config(_config({"input_cost_per_token": bad}))
