"""Per-model facts the memory budget needs: which tokenizer, how big a context."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gateway.settings import GatewayConfig


@dataclass(frozen=True, slots=True)
class ModelLimits:
    upstream_models: dict[str, str]  # gateway model name -> litellm model string
    context_windows: dict[str, int]  # gateway model name -> input tokens, where known

    def tokenizer_model(self, model: str) -> str:
        return self.upstream_models.get(model, model)

    def context_window(self, model: str, default: int) -> int:
        return self.context_windows.get(model, default)


def model_limits(
    config: GatewayConfig, lookup_context_window: Callable[[str], int | None]
) -> ModelLimits:
    """From the config's `model_info` (`max_input_tokens`, else `max_tokens`) or, failing
    that, `lookup_context_window(litellm model)` (litellm's bundled model map). With
    several deployments of one name, the smallest window counts."""
    upstream: dict[str, str] = {}
    windows: dict[str, int] = {}
    for deployment in config.model_list:
        name = deployment.model_name
        litellm_model = deployment.litellm_params.model
        upstream.setdefault(name, litellm_model)
        info = deployment.model_info or {}
        window = info.get("max_input_tokens") or info.get("max_tokens")
        if not isinstance(window, int) or window <= 0:
            window = lookup_context_window(litellm_model)
        if window:
            windows[name] = min(windows.get(name, window), window)
    return ModelLimits(upstream, windows)
