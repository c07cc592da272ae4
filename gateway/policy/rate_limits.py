"""The policy block of the rate limits (`rate_limits:` in a policy file)."""

from __future__ import annotations

from pydantic import Field

from gateway.strict_model import StrictModel


class RateLimit(StrictModel):
    """Requests and tokens per minute; None: no limit of that kind. A bucket holds
    `*_burst` units at once (default: a minute's worth) and refills evenly, so
    `rpm: 60, request_burst: 1` admits one request a second."""

    rpm: int | None = Field(default=None, ge=1)
    tpm: int | None = Field(default=None, ge=1)
    request_burst: int | None = Field(default=None, ge=1)
    token_burst: int | None = Field(default=None, ge=1)

    def requests_burst(self) -> int | None:
        return None if self.rpm is None else (self.request_burst or self.rpm)

    def tokens_burst(self) -> int | None:
        return None if self.tpm is None else (self.token_burst or self.tpm)


class RateLimitsPolicy(StrictModel):
    """Per tenant and per API key (README, "Rate limits"). Read from the tenant's
    policy (model ""): one limit per tenant whatever the model."""

    # All of the tenant's requests together, over every key and replica.
    tenant: RateLimit = Field(default_factory=RateLimit)
    # Each API key of the tenant on its own.
    key: RateLimit = Field(default_factory=RateLimit)
    # Cache hits always count against the request limits; against the token limits
    # only when true (a hit spends no provider tokens).
    hits_count_tokens: bool = False

    def limited(self) -> bool:
        return any(
            limit is not None
            for limit in (self.tenant.rpm, self.tenant.tpm, self.key.rpm, self.key.tpm)
        )
