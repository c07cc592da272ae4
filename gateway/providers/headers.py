"""Which of a provider's response headers reach the client, and under what name.

An allow-list: a provider also sends headers about its own infrastructure (servers,
cookies, internal hosts, processing times) that are none of the client's business and
could even steer it (`set-cookie`). What passes is what a client needs to pace itself
and to quote the call to the provider's support:

- `retry-after`, `retry-after-ms`: how long the provider asks to be left alone;
- `x-ratelimit-*` (OpenAI and most OpenAI-compatible servers) and `anthropic-ratelimit-*`:
  the rate-limit window, what is left of it and when it resets;
- the provider's request id (`x-request-id`, or `request-id`) as `x-upstream-request-id`:
  the gateway's own `x-request-id` names the gateway's request and must not be replaced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

UPSTREAM_REQUEST_ID_HEADER = "x-upstream-request-id"
# Sent on every upstream error the gateway answers: whether the client should try the
# same request again (the `openai` SDKs obey it over their own status rules).
SHOULD_RETRY_HEADER = "x-should-retry"

_EXACT_NAMES = frozenset({"retry-after", "retry-after-ms"})
_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")
_REQUEST_ID_NAMES = ("x-request-id", "request-id")
# A header value is relayed only if it is short and plain: a provider (or something in
# between) must not be able to smuggle a line break or a kilobyte of text to clients.
_PLAIN_VALUE = re.compile(r"^[\x20-\x7e]{1,256}$")
_MAX_PASSED_HEADERS = 32


def passthrough_headers(
    raw: Mapping[str, str] | Iterable[tuple[str, str]] | None,
) -> dict[str, str]:
    """The allow-listed headers of a provider response, lower-cased names."""
    if raw is None:
        return {}
    items = raw.items() if isinstance(raw, Mapping) else raw
    passed: dict[str, str] = {}
    request_id: dict[str, str] = {}
    for name, value in items:
        if not isinstance(name, str) or not isinstance(value, str):
            continue
        key = name.lower()
        if not _PLAIN_VALUE.match(value):
            continue
        if key in _REQUEST_ID_NAMES:
            request_id[key] = value
            continue
        allowed = key in _EXACT_NAMES or key.startswith(_PREFIXES)
        if allowed and len(passed) < _MAX_PASSED_HEADERS:
            passed[key] = value
    for key in _REQUEST_ID_NAMES:
        if key in request_id:
            passed[UPSTREAM_REQUEST_ID_HEADER] = request_id[key]
            break
    return passed
