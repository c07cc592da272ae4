"""What the pipeline needs from an upstream: complete, stream, embed."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Protocol


class Provider(Protocol):
    def has_model(self, model: str) -> bool: ...

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """Non-streaming chat completion; raises `UpstreamError` on failure."""
        ...

    def stream(self, body: dict[str, Any]) -> AsyncGenerator[dict[str, Any], None]:
        """Streaming chat completion, one dict per upstream chunk.

        Errors raise `UpstreamError`, before the first chunk or mid-stream.
        """
        ...

    async def embed(self, body: dict[str, Any]) -> dict[str, Any]: ...

    async def close(self) -> None: ...
