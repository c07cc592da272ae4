"""What the gateway needs from an upstream, in two parts: `ChatProvider` (chat
completions, and what the gateway asks of the chat client: its warm-up, its models'
context windows and prices, the request parameters it reserves for itself) and
`EmbeddingProvider` (embeddings). `Provider` is both: what the app is given.

The only implementation that reaches a real upstream is `litellm_provider.LiteLLMProvider`;
`gateway.testing.fake_provider.FakeProvider` answers the same protocols in-process.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Protocol

# A forwarded chat body with this key set (by the pipeline, for policy
# `unknown_params: drop`) asks the provider to leave out the parameters it knows the
# model not to take; the provider removes the key before the call. Clients cannot set
# it: fields starting with `_` are refused (gateway/api/schemas.py).
DROP_UNKNOWN_PARAMS = "_gateway_drop_unknown_params"


@dataclass(slots=True)
class UpstreamReport:
    """What a provider call said besides the answer; the provider fills it in.

    `model` is the `model_name` (from `model_list`) whose deployment answered: the
    requested one, or a fallback of it. `headers` are the provider's response headers
    that pass on to the client (see `gateway/providers/headers.py`).
    """

    model: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


class RequestRules(Protocol):
    """What the provider's client refuses in a request body, checked when the body is
    parsed (a 400 there, instead of a failure inside the provider call)."""

    def reserved_parameter(self, name: str) -> bool:
        """Whether a top-level body field is a setting of the provider's client (an
        endpoint, a key, a mock), not a request parameter: a request may not set it."""
        ...

    def user_content_part_types(self) -> frozenset[str]:
        """The content part types the client lets through in a user message."""
        ...


class ChatProvider(RequestRules, Protocol):
    def has_model(self, model: str) -> bool: ...

    async def complete(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> dict[str, Any]:
        """Non-streaming chat completion; raises `UpstreamError` on failure."""
        ...

    def stream(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Streaming chat completion, one dict per upstream chunk; `report` is filled
        in once the call has started, before the first chunk.

        Errors raise `UpstreamError`, before the first chunk or mid-stream.
        """
        ...

    async def warm_up(self) -> None:
        """Pay any first-call cost at start-up; never raises."""
        ...

    def context_window(self, model: str) -> int | None:
        """Input tokens the upstream `model` accepts; None when unknown (the policy's
        default applies)."""
        ...

    def cost_usd(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """What the upstream `model` would charge for these tokens; 0.0 when unknown."""
        ...

    async def close(self) -> None: ...


class EmbeddingProvider(Protocol):
    def has_model(self, model: str) -> bool: ...

    async def embed(self, body: dict[str, Any]) -> dict[str, Any]:
        """An OpenAI `/v1/embeddings` body in, its response out; raises `UpstreamError`."""
        ...


class Provider(ChatProvider, EmbeddingProvider, Protocol):
    """Chat and embeddings from one upstream client (litellm's)."""
