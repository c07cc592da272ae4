"""Per-deployment rate limits: `rpm` and `tpm` in `model_list[].litellm_params`.

Before a call the router charges the chosen deployment one request and checks that its
token bucket is not in debt; a deployment without room is skipped for another of the
same `model_name`, and when none has room the request fails with a 429 (after the
model's `fallbacks`, if it has any) whose `retry-after` is the soonest a deployment
frees up. Tokens are charged after the call from the answer's `usage` (a stream's usage
chunk; a stream without one counts only against `rpm`). The buckets live in the
backend's `RateLimiter`, so replicas on one Redis share them; a limiter that is down
lets the call through (logged, throttled).
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Protocol, runtime_checkable

from gateway.errors import UpstreamError
from gateway.storage.protocols import StoreUnavailable
from gateway.storage.rate_limiting import RateBucket, RateLimiter
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)


class DeploymentsBusy(Exception):
    """Every deployment of a model group is at its rpm/tpm."""

    status_code = 429  # retryable: the router tries the model's fallbacks

    def __init__(self, group: str, retry_after_seconds: float) -> None:
        super().__init__(f"every deployment of '{group}' is at its rate limit")
        self.group = group
        self.retry_after_seconds = retry_after_seconds

    def for_client(self) -> UpstreamError:
        wait = self.retry_after_seconds
        return UpstreamError(
            f"Every deployment of model '{self.group}' is at its rate limit; "
            f"retry in {math.ceil(wait)}s.",
            status_code=429,
            error_type="requests",
            code="rate_limit_exceeded",
            headers={
                "retry-after": str(max(1, math.ceil(wait))),
                "retry-after-ms": str(max(1, math.ceil(wait * 1000))),
            },
        )


@runtime_checkable
class LimitsDeployments(Protocol):
    """A provider whose deployments have their own limits, given the store late (the
    provider is built before the storage backend opens)."""

    def limit_deployments(self, limiter: RateLimiter) -> None: ...


def attach_deployment_limits(provider: object, limiter: RateLimiter) -> None:
    """Deployment rpm/tpm buckets in the backend's limiter, shared like the others."""
    if isinstance(provider, LimitsDeployments):
        provider.limit_deployments(limiter)


class DeploymentLimits:
    """The deployments' buckets; `limiter` is None until the storage backend is open."""

    def __init__(self) -> None:
        self.limiter: RateLimiter | None = None
        self._failures = ThrottledLogger(logger, interval_seconds=60)
        self._spending: set[asyncio.Task[None]] = set()

    async def admit(self, key: str, rpm: int | None, tpm: int | None) -> float | None:
        """None when the deployment may take the call (it is charged one request),
        else the seconds until it has room."""
        if self.limiter is None or (rpm is None and tpm is None):
            return None
        buckets = []
        if rpm is not None:
            buckets.append(RateBucket(f"{key}:rq", rpm, rpm, 1))
        if tpm is not None:
            # Only checked: the tokens are charged once the answer says how many.
            buckets.append(RateBucket(f"{key}:tk", tpm, tpm, 0))
        try:
            verdict = await self.limiter.acquire(buckets)
        except StoreUnavailable:
            self._failures.warning("rate limiter store unavailable; deployments not limited")
            return None
        return None if verdict.allowed else max(verdict.retry_after_seconds, 0.001)

    def spend_later(self, key: str, tpm: int, tokens: int) -> None:
        """`spend` in its own task."""
        if self.limiter is None:
            return
        task = asyncio.create_task(self.spend(key, tpm, tokens))
        self._spending.add(task)
        task.add_done_callback(self._spending.discard)

    async def spend(self, key: str, tpm: int | None, tokens: int) -> None:
        """Charge the tokens an answer used to the deployment's `tpm`."""
        if self.limiter is None or tpm is None or tokens <= 0:
            return
        try:
            await self.limiter.adjust([RateBucket(f"{key}:tk", tpm, tpm, tokens)])
        except StoreUnavailable:
            self._failures.warning("rate limiter store unavailable; deployment tokens lost")
