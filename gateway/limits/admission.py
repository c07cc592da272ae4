"""One request's rate-limit admission, as the pipeline's `Admission` (see
`gateway/pipeline/admission.py` for where its two steps run).

The request limits are checked as soon as the request is built, in a task the pipeline
awaits once its exact read is out and the request is classified; the token limits (when
hits do not count against them, the default) are charged only before the provider is
called, with the tiktoken estimate. So an exact or semantic hit costs one limiter call,
overlapping the read and the classification, and no estimate or refund. `grant` is
what was charged so far, which the route settles once the answer is known. What the
check adds to a hit: docs/measurements.md#rate-limit-check-on-a-hit.
"""

from __future__ import annotations

import asyncio
import contextlib

from gateway.limits.service import NO_GRANT, Grant, RequestLimits
from gateway.pipeline.request import ChatRequest


class RateAdmission:
    def __init__(
        self, limits: RequestLimits, request: ChatRequest, grant: Grant | None = None
    ) -> None:
        """`grant`: what the exact-hit shortcut already charged (nothing is asked again).
        The route builds one only for a tenant with limits (`RequestLimits.applies`)."""
        self._limits = limits
        self._request = request
        self.grant = NO_GRANT if grant is None else grant
        self._check: asyncio.Future[Grant] | None = None
        if grant is None:
            self._check = asyncio.ensure_future(limits.admit(request, defer_tokens=True))
            # A request cancelled before it awaited the check (the client left) must
            # not leave a "never retrieved" refusal behind in the log.
            self._check.add_done_callback(_retrieved)

    async def admitted(self) -> None:
        check, self._check = self._check, None
        if check is not None:
            self.grant = await check

    async def before_forward(self) -> None:
        await self.admitted()
        self.grant = await self._limits.admit_deferred(self._request, self.grant)

    async def close(self) -> None:
        """The pipeline ended without awaiting the check (it failed first): let the
        check finish, so that what it charged is known and settled with the rest."""
        check, self._check = self._check, None
        if check is not None:
            with contextlib.suppress(Exception):
                self.grant = await check


def _retrieved(check: asyncio.Future[Grant]) -> None:
    if not check.cancelled():
        check.exception()
