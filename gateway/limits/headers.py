"""The gateway's 429: OpenAI's envelope and the headers the SDKs read.

OpenAI answers a rate limit with status 429, `code: rate_limit_exceeded` and a `type`
naming the exhausted limit (`requests` or `tokens`); its SDK waits `retry-after-ms`
(else `retry-after`) before it retries. `x-ratelimit-*` say the limit, what is left and
when it is full again, in OpenAI's duration format (`1s`, `6m0s`, `250ms`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from gateway.errors import GatewayError
from gateway.storage.rate_limiting import BucketState, RateBucket, RateVerdict


class RateLimited(GatewayError, status_code=429, error_type="requests", code="rate_limit_exceeded"):
    """A request over one of the gateway's own rate limits (never the provider's).
    `scope` is the exhausted limit's: `tenant` or `key`."""

    scope = "tenant"


def duration_text(seconds: float) -> str:
    """OpenAI's reset format: `250ms` under a second, `1.5s`, `6m0s`."""
    if seconds < 1:
        return f"{max(0, math.ceil(seconds * 1000))}ms"
    if seconds < 60:
        return f"{round(seconds, 3):g}s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{round(rest, 3):g}s"


def _tightest(
    buckets: Sequence[RateBucket], states: Sequence[BucketState], kind: str
) -> tuple[RateBucket, BucketState] | None:
    pairs = [(b, s) for b, s in zip(buckets, states, strict=True) if b.key.endswith(kind)]
    return min(pairs, key=lambda pair: pair[1].remaining) if pairs else None


def limit_headers(buckets: Sequence[RateBucket], verdict: RateVerdict) -> dict[str, str]:
    headers: dict[str, str] = {}
    for kind, suffix in ((":rq", "requests"), (":tk", "tokens")):
        found = _tightest(buckets, verdict.states, kind)
        if found is None:
            continue
        bucket, state = found
        headers[f"x-ratelimit-limit-{suffix}"] = str(bucket.per_minute)
        headers[f"x-ratelimit-remaining-{suffix}"] = str(state.remaining)
        headers[f"x-ratelimit-reset-{suffix}"] = duration_text(state.reset_seconds)
    return headers


def refusal(buckets: Sequence[RateBucket], verdict: RateVerdict, tenant: str) -> RateLimited:
    """The 429 for a refused verdict: what ran out, and when to retry."""
    wait = verdict.retry_after_seconds
    pairs = zip(buckets, verdict.states, strict=True)
    exhausted = [b for b, s in pairs if b.cost > 0 and s.remaining < b.cost] or list(buckets)
    kind = "tokens" if all(b.key.endswith(":tk") for b in exhausted) else "requests"
    scope = "key" if all(b.key.startswith("k:") for b in exhausted) else "tenant"
    who = "an API key of tenant" if scope == "key" else "tenant"
    headers = limit_headers(buckets, verdict)
    headers["retry-after"] = str(max(1, math.ceil(wait)))
    headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
    error = RateLimited(
        f"Rate limit reached for {who} '{tenant}' on {kind} per minute. "
        f"Please try again in {duration_text(wait)}.",
        headers=headers,
    )
    error.error_type = kind
    error.scope = scope
    return error
