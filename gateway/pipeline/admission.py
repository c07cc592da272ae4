"""The hooks by which the route's admission control (the rate limits) runs inside the
pipeline, where it can overlap the exact read and charge tokens only for what is sent.

The pipeline awaits `admitted` once the exact read is under way and the request is
classified (so the check's round trip overlaps both) and before any other work: a
refused request costs a key, a read and a classification, never an embedding, a lookup
or memory. It awaits `before_forward` just
before the provider is called: a token charge for an answer that comes from a cache
would only be refunded afterwards. Either raises the refusal (a `GatewayError`).
"""

from __future__ import annotations

from typing import Protocol


class Admission(Protocol):
    async def admitted(self) -> None:
        """Return once the request is admitted; raise its refusal otherwise."""

    async def before_forward(self) -> None:
        """Charge what only a forwarded request costs; raise its refusal otherwise."""
