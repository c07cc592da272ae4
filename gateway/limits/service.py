"""The per-tenant and per-key rate limits in front of the pipeline (policy `rate_limits`).

`admit` runs before anything else of a chat request, the exact-cache hit included: one
limiter call charges one request and the prompt's estimated tokens (tiktoken) to every
bucket that applies, or refuses with a 429. `settle` corrects the token charge once the
answer is known: usage minus the estimate for an answer from the provider, the whole
estimate back for a cache hit (unless `hits_count_tokens`) and for a failed request.
Corrections run in the background, off the response path.

The limiter's store being down fails open (counted, logged throttled) unless the
tenant's `failure.rate_limit` is `closed` (503).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from gateway.errors import StoreUnavailableResponse
from gateway.limits.headers import refusal
from gateway.pipeline.request import ChatRequest
from gateway.policy.models import Policy
from gateway.policy.rate_limits import RateLimit
from gateway.storage.protocols import StoreUnavailable
from gateway.storage.rate_limiting import RateBucket, RateLimiter
from gateway.telemetry.metrics import GatewayMetrics
from gateway.telemetry.throttled_log import ThrottledLogger

logger = logging.getLogger(__name__)

# (model, chat body) -> estimated prompt tokens
TokenEstimate = Callable[[str, dict[str, object]], int]
# (model, text) -> its tokens (a streamed answer without a usage chunk)
TextTokens = Callable[[str, str], int]
# tenant -> the tenant's policy (model "")
TenantPolicy = Callable[[str], Policy]


@dataclass(frozen=True, slots=True)
class Grant:
    """What `admit` charged: the token buckets and the estimate each took."""

    tokens: tuple[RateBucket, ...] = ()
    estimate: int = 0
    hits_count_tokens: bool = False
    # The token limits apply but were not charged yet (`admit(defer_tokens=True)`).
    deferred: bool = False


NO_GRANT = Grant()


def _buckets(
    prefix: str, limit: RateLimit, estimate: int | None
) -> tuple[list[RateBucket], list[RateBucket]]:
    requests: list[RateBucket] = []
    tokens: list[RateBucket] = []
    request_burst, token_burst = limit.requests_burst(), limit.tokens_burst()
    if limit.rpm is not None and request_burst is not None:
        requests.append(RateBucket(f"{prefix}:rq", limit.rpm, request_burst, 1))
    if limit.tpm is not None and token_burst is not None and estimate is not None:
        # More than the bucket holds passes when it is full (see gcra.py), not never.
        cost = min(estimate, token_burst)
        tokens.append(RateBucket(f"{prefix}:tk", limit.tpm, token_burst, cost))
    return requests, tokens


class RequestLimits:
    def __init__(
        self,
        limiter: RateLimiter,
        tenant_policy: TenantPolicy,
        estimate_tokens: TokenEstimate,
        count_text: TextTokens,
        metrics: GatewayMetrics | None = None,
    ) -> None:
        self.count_text = count_text
        self._limiter = limiter
        self._tenant_policy = tenant_policy
        self._estimate = estimate_tokens
        self._metrics = metrics
        self._failures = ThrottledLogger(logger, interval_seconds=60)
        self._corrections: set[asyncio.Task[None]] = set()

    def applies(self, request: ChatRequest) -> bool:
        """Whether any limit applies to the request's tenant (else nothing is checked)."""
        return self._tenant_policy(request.tenant).rate_limits.limited()

    async def admit(self, request: ChatRequest, *, defer_tokens: bool = False) -> Grant:
        """Charge the request, or raise `RateLimited` (429). `defer_tokens` (the exact-hit
        shortcut, before it knows whether it hits): the request limits only, when a hit
        would not count against the token limits; `admit_deferred` charges the tokens
        once the lookup missed. So a hit costs one limiter call and no token estimate."""
        policy = self._tenant_policy(request.tenant)
        limits = policy.rate_limits
        if not limits.limited():
            return NO_GRANT
        needs_tokens = limits.tenant.tpm is not None or limits.key.tpm is not None
        deferred = needs_tokens and defer_tokens and not limits.hits_count_tokens
        estimate = (
            self._estimate(request.model, request.body) if needs_tokens and not deferred else None
        )
        requests, tokens = self._buckets(request, limits.tenant, limits.key, estimate)
        grant = Grant(tuple(tokens), estimate or 0, limits.hits_count_tokens, deferred)
        return await self._acquire(request, policy, requests + tokens, grant)

    async def admit_deferred(self, request: ChatRequest, grant: Grant) -> Grant:
        """The token charge `admit(defer_tokens=True)` left for after a missed lookup."""
        if not grant.deferred:
            return grant
        policy = self._tenant_policy(request.tenant)
        limits = policy.rate_limits
        estimate = self._estimate(request.model, request.body)
        _, tokens = self._buckets(request, limits.tenant, limits.key, estimate)
        if not tokens:
            return NO_GRANT
        charged = Grant(tuple(tokens), estimate, limits.hits_count_tokens)
        return await self._acquire(request, policy, tokens, charged)

    @staticmethod
    def _buckets(
        request: ChatRequest, tenant: RateLimit, key: RateLimit, estimate: int | None
    ) -> tuple[list[RateBucket], list[RateBucket]]:
        requests, tokens = _buckets(f"t:{request.tenant}", tenant, estimate)
        key_id = request.principal.key_id
        if key_id is not None:
            key_requests, key_tokens = _buckets(f"k:{key_id}", key, estimate)
            requests += key_requests
            tokens += key_tokens
        return requests, tokens

    async def _acquire(
        self, request: ChatRequest, policy: Policy, buckets: list[RateBucket], grant: Grant
    ) -> Grant:
        if not buckets:
            return grant
        try:
            verdict = await self._limiter.acquire(buckets)
        except StoreUnavailable as exc:
            self._store_failed("acquire")
            if policy.failure.rate_limit == "closed":
                raise StoreUnavailableResponse(
                    "The rate limiter is unavailable and the policy fails closed."
                ) from exc
            return NO_GRANT
        if not verdict.allowed:
            error = refusal(buckets, verdict, request.tenant)
            if self._metrics is not None:
                self._metrics.rate_limited.labels(request.tenant, error.scope).inc()
            raise error
        return grant

    def settle(self, grant: Grant, used_tokens: int | None, *, hit: bool = False) -> None:
        """Correct the estimate: `used_tokens` is what the answer cost (None: nothing was
        spent, e.g. the request failed; 0: unknown, the estimate stands)."""
        if not grant.tokens or used_tokens == 0:
            return
        if used_tokens is None or (hit and not grant.hits_count_tokens):
            used_tokens = 0
        # Each bucket took its own charge (the estimate, at most its burst).
        corrections = [
            RateBucket(b.key, b.per_minute, b.burst, used_tokens - b.cost)
            for b in grant.tokens
            if used_tokens != b.cost
        ]
        if not corrections:
            return
        task = asyncio.create_task(self._adjust(corrections))
        self._corrections.add(task)
        task.add_done_callback(self._corrections.discard)

    async def _adjust(self, corrections: list[RateBucket]) -> None:
        try:
            await self._limiter.adjust(corrections)
        except StoreUnavailable:
            self._store_failed("adjust")

    def _store_failed(self, operation: str) -> None:
        if self._metrics is not None:
            self._metrics.store_failure("rate_limiter", operation)
        self._failures.warning("rate limiter store unavailable (%s); not limiting", operation)
