"""What a request costs: per-token prices from the config's `model_list[].model_info`
(`input_cost_per_token`, `output_cost_per_token`, litellm's own names) where set, else
litellm's bundled price map for the deployment's litellm model. Both spend and savings
are priced here, so they are comparable."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gateway.settings import GatewayConfig

# (litellm model, prompt tokens, completion tokens) -> USD; 0.0 when the price is unknown.
PriceMap = Callable[[str, int, int], float]


@dataclass(frozen=True, slots=True)
class TokenPrices:
    """USD per token; None: litellm's price for that side."""

    input_usd: float | None
    output_usd: float | None


class Pricer:
    def __init__(
        self,
        upstream_models: dict[str, str],
        overrides: dict[str, TokenPrices],
        price_map: PriceMap,
    ) -> None:
        self._upstream = upstream_models  # gateway model name -> litellm model string
        self._overrides = overrides
        self._price_map = price_map

    @classmethod
    def from_config(cls, config: GatewayConfig, price_map: PriceMap) -> Pricer:
        """With several deployments of one name, the first one's prices count (the
        same as for the litellm model the name is priced by)."""
        upstream: dict[str, str] = {}
        overrides: dict[str, TokenPrices] = {}
        for deployment in config.model_list:
            name = deployment.model_name
            if name in upstream:
                continue
            upstream[name] = deployment.litellm_params.model
            info = deployment.model_info or {}
            prices = TokenPrices(
                _price(info.get("input_cost_per_token")), _price(info.get("output_cost_per_token"))
            )
            if prices.input_usd is not None or prices.output_usd is not None:
                overrides[name] = prices
        return cls(upstream, overrides, price_map)

    def cost_usd(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """What `prompt_tokens` in and `completion_tokens` out of gateway model `model`
        cost."""
        prices = self._overrides.get(model)
        litellm_model = self._upstream.get(model, model)
        if prices is None:
            return self._price_map(litellm_model, prompt_tokens, completion_tokens)
        prompt_usd = (
            prompt_tokens * prices.input_usd
            if prices.input_usd is not None
            else self._price_map(litellm_model, prompt_tokens, 0)
        )
        completion_usd = (
            completion_tokens * prices.output_usd
            if prices.output_usd is not None
            else self._price_map(litellm_model, 0, completion_tokens)
        )
        return prompt_usd + completion_usd


def _price(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
