"""A request's cache controls from its headers: `Cache-Control` (no-cache, no-store,
max-age) and `x-gateway-cache-ttl`."""

from __future__ import annotations

import re

from fastapi import Request

from gateway.errors import InvalidRequest
from gateway.pipeline.cache_controls import CacheControl

CACHE_TTL_HEADER = "x-gateway-cache-ttl"
# Whole seconds, at least 1; ten digits at most (~317 years: the policy bounds it anyway).
_SECONDS = re.compile(r"[1-9][0-9]{0,9}")


def cache_ttl_seconds(request: Request) -> int | None:
    """`x-gateway-cache-ttl` as seconds, None when absent; anything but a positive whole
    number is refused (400): a TTL the gateway guessed at could keep an answer longer
    than its sender meant."""
    value = request.headers.get(CACHE_TTL_HEADER)
    if value is None:
        return None
    if not _SECONDS.fullmatch(value.strip()):
        raise InvalidRequest(
            f"'{CACHE_TTL_HEADER}' must be a whole number of seconds, at least 1.",
            param=CACHE_TTL_HEADER,
            code="invalid_cache_ttl",
        )
    return int(value.strip())


def request_cache_control(request: Request) -> CacheControl:
    return CacheControl.parse(request.headers.get("cache-control"), cache_ttl_seconds(request))
