"""The request parameters litellm reserves for itself, and the content it lets through:
what `LiteLLMProvider.reserved_parameter` and `user_content_part_types` answer.

The provider passes body fields to litellm as keyword arguments, so a body field named
like one of litellm's own settings (`api_base`, `api_key`, `mock_response`, `timeout`,
...) would steer the gateway's provider call rather than the model; the request parsing
refuses those with a 400. litellm's own lists are read lazily (`litellm.types`), never at
import.
"""

from __future__ import annotations

import functools

# Request fields of the OpenAI API that litellm also reads as its own keyword arguments;
# these stay allowed (and typed below).
_OPENAI_FIELDS = frozenset({"metadata", "user"})

# litellm's keyword arguments that steer the call itself (endpoint, credentials,
# retries, timeouts, mocks, callbacks, pricing), read from `litellm.completion`'s
# signature and the Router; `litellm.types.utils.all_litellm_params` adds the rest.
_LITELLM_KWARGS = frozenset(
    {
        "additional_drop_params",
        "api_base",
        "api_key",
        "api_version",
        "azure_ad_token",
        "base_url",
        "cache",
        "caching",
        "callbacks",
        "client",
        "config",
        "content_policy_fallbacks",
        "context_window_fallbacks",
        "cooldown_time",
        "custom_llm_provider",
        "default_fallbacks",
        "deployment_id",
        "disable_fallbacks",
        "drop_params",
        "engine",
        "extra_body",
        "extra_headers",
        "failure_callback",
        "fallbacks",
        "headers",
        "input_cost_per_token",
        "max_retries",
        "model_group",
        "model_info",
        "model_list",
        "num_retries",
        "organization",
        "output_cost_per_token",
        "request_timeout",
        "shared_session",
        "specific_deployment",
        "ssl_verify",
        "stream_timeout",
        "success_callback",
        "timeout",
    }
)
_RESERVED_PREFIXES = ("_", "litellm_", "mock_", "aws_", "azure_", "vertex_")
# OpenAI's own content part types for user messages, if litellm's list cannot be read.
_OPENAI_USER_PART_TYPES = ("text", "image_url", "input_audio", "file")


@functools.cache
def _litellm_params() -> frozenset[str]:
    """litellm's own parameter names; imported on first use, by then loaded already by
    `LiteLLMProvider.create`. The static list above stands alone if litellm moves this one."""
    try:
        from litellm.types.utils import all_litellm_params
    except ImportError:
        return frozenset()
    return frozenset(all_litellm_params)


@functools.cache
def litellm_user_content_part_types() -> frozenset[str]:
    """The content part types litellm lets through in a user message (OpenAI's, and the
    ones it maps for other providers); it refuses any other before calling one."""
    try:
        from litellm.types.llms.openai import ValidUserMessageContentTypes
    except ImportError:
        return frozenset(_OPENAI_USER_PART_TYPES)
    return frozenset(ValidUserMessageContentTypes)


def litellm_reserved_parameter(name: str) -> bool:
    """Whether a top-level body field is one of litellm's own keyword arguments: the
    provider passes body fields to litellm as keyword arguments, so `api_base` would
    send the deployment's key to any URL, `mock_response` would skip the provider."""
    if name in _OPENAI_FIELDS:
        return False
    return (
        name in _LITELLM_KWARGS or name.startswith(_RESERVED_PREFIXES) or name in _litellm_params()
    )
