"""What the pipeline needs from an upstream: complete, stream, embed."""

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


class Provider(Protocol):
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

    async def embed(self, body: dict[str, Any]) -> dict[str, Any]: ...

    async def close(self) -> None: ...
