"""Build the request limits from the app's parts (called by `gateway/wiring.py`)."""

from __future__ import annotations

from collections.abc import Callable

from gateway.api.prompt_tokens import PromptTokens
from gateway.limits.service import RequestLimits
from gateway.memory.limits import ModelLimits
from gateway.memory.tokens import Tokenizers
from gateway.policy.models import Policy
from gateway.storage.rate_limiting import RateLimiter
from gateway.telemetry.metrics import GatewayMetrics


def request_limits(
    limiter: RateLimiter,
    resolve: Callable[[str, str], Policy],
    tokenizers: Tokenizers,
    limits: ModelLimits,
    metrics: GatewayMetrics,
) -> RequestLimits:
    """Limits read from each tenant's own policy (model ""), prompts estimated with the
    same tiktoken counting as `count_tokens`."""
    prompt_tokens = PromptTokens(tokenizers, limits)

    def count_text(model: str, text: str) -> int:
        return tokenizers.for_model(limits.tokenizer_model(model)).count(text)

    return RequestLimits(
        limiter, lambda tenant: resolve(tenant, ""), prompt_tokens.count, count_text, metrics
    )
