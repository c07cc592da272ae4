"""Response helpers: orjson bodies and Server-Sent Events framing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

import orjson
from fastapi import Response

JSON_MEDIA_TYPE = "application/json"
SSE_DONE = b"data: [DONE]\n\n"
# Event streams are neither cached nor buffered by proxies (nginx reads the second).
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def json_response(
    content: Any, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return Response(
        orjson.dumps(content), status_code=status, headers=headers, media_type=JSON_MEDIA_TYPE
    )


def sse_event(payload: Mapping[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


async def sse_from_list(chunks: Iterable[Mapping[str, Any]]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield sse_event(chunk)
    yield SSE_DONE
