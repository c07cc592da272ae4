"""Pure ASGI layer in front of FastAPI for exact hits of `POST /v1/chat/completions`.

A body the full path already answered with a plain exact hit (`hit_memo.py`) is known
valid, cacheable and keyed: the shortcut authenticates the caller, checks that the
policy object is still the one in force, reads the exact cache with the known key while
the rate limits admit the request, and renders the hit with the full path's own pieces
(`ChatPipeline.serve_known_exact`, `settle_outcome`, `render_outcome`): the same body,
headers, decision record, metrics, audit sampling and spend. It skips routing,
dependency solving, body validation and classification.

Anything else goes down the full path with the body replayed untouched: a streaming
body or one never seen, a header that changes handling (cache controls, memory scope,
task), an unknown or failing key, a changed policy, no servable entry, a store failure,
a refusal by the rate limits. What the shortcut charged to the rate limits before
falling through travels with the request (`door.PREADMITTED_GRANT`), so nothing is
charged twice.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.api.chat_render import render_outcome
from gateway.api.door import HANDLING_HEADERS, PREADMITTED_GRANT
from gateway.api.hit_memo import HitMemo, KnownRequest, body_digest
from gateway.auth import KEY_HEADERS
from gateway.limits.outcome import settle_outcome
from gateway.pipeline.request import ChatRequest
from gateway.storage.protocols import CachedCompletion
from gateway.wiring import Services

CHAT_PATH = "/v1/chat/completions"
# Headers that change how a request is handled: such requests always take the full path
# (which also validates them). A chunked body has no length to bound the read by.
_FULL_PATH_HEADERS = frozenset(
    {*(name.encode() for name in HANDLING_HEADERS), b"transfer-encoding"}
)
_READ_HEADERS = frozenset({b"authorization", b"content-length", *(n.encode() for n in KEY_HEADERS)})


def _headers(scope: Scope) -> dict[bytes, str] | None:
    """The headers the shortcut reads (the first of each, as Starlette reads them), or
    None when one that only the full path handles is present."""
    found: dict[bytes, str] = {}
    for name, value in scope["headers"]:
        if name in _FULL_PATH_HEADERS:
            return None
        if name in _READ_HEADERS and name not in found:
            found[name] = value.decode("latin-1")
    return found


class _Replay:
    """The request's messages already read, then the server's receive."""

    def __init__(self, messages: list[Message], receive: Receive) -> None:
        self._messages = messages
        self._receive = receive

    async def __call__(self) -> Message:
        if self._messages:
            return self._messages.pop(0)
        return await self._receive()


async def _read_small_body(
    receive: Receive, declared: str | None, max_bytes: int
) -> tuple[list[Message], bytes | None]:
    """The messages read and the whole body; None when the body is not one the memo may
    hold (no declared length, or longer than it keeps): then nothing is read."""
    if declared is None or not declared.isascii() or not declared.isdigit():
        return [], None
    if len(declared) > 18 or int(declared) > max_bytes:
        return [], None
    messages: list[Message] = []
    parts: list[bytes] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, None  # the client left: the full path reports it
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return messages, b"".join(parts)


def _abandon(read: asyncio.Future[Any]) -> None:
    read.cancel()
    read.add_done_callback(lambda done: done.cancelled() or done.exception())


class ExactHitShortcut:
    def __init__(self, app: ASGIApp, memo: HitMemo) -> None:
        self.app = app
        self._memo = memo

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] != CHAT_PATH
            or scope["method"] != "POST"
            or not len(self._memo)
        ):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        messages: list[Message] = []
        response: Response | None = None
        if headers is not None:
            messages, raw = await _read_small_body(
                receive, headers.get(b"content-length"), self._memo.max_body_bytes
            )
            if raw is not None:
                response = await self._answer(scope, headers, raw)
        replay = _Replay(messages, receive)
        if response is None:
            await self.app(scope, replay, send)
        else:
            await response(scope, replay, send)

    async def _answer(self, scope: Scope, headers: dict[bytes, str], raw: bytes) -> Response | None:
        known = self._memo.recall(body_digest(raw))
        services: Services | None = getattr(scope["app"].state, "services", None)
        if known is None or services is None:
            return None
        chat = await _known_request(scope, services, headers, known)
        if chat is None:
            return None
        pipeline, limits = services.pipeline, services.rate_limits
        # The read and the rate-limit check overlap (on Redis: two round trips at once);
        # the token limits are charged only if it misses (a hit spends no tokens).
        read = asyncio.ensure_future(pipeline.known_exact_read(chat))
        try:
            grant = await limits.admit(chat, defer_tokens=True)
        except Exception:
            # A refusal charged nothing: the full path asks again and answers it.
            _abandon(read)
            return None
        cached: CachedCompletion | None = await read
        outcome = None if cached is None else pipeline.serve_known_exact(chat, cached)
        if outcome is None:
            scope.setdefault("state", {})[PREADMITTED_GRANT] = grant
            return None
        services.metrics.exact_hit_shortcut.inc()
        return render_outcome(chat, settle_outcome(limits, grant, outcome, chat.model))


async def _known_request(
    scope: Scope, services: Services, headers: dict[bytes, str], known: KnownRequest
) -> ChatRequest | None:
    """The pipeline's request for a known body, when this caller and the policy in
    force are those it was worked out for."""
    try:
        principal = await services.keys.resolve(
            headers.get(b"authorization"), *(headers.get(n.encode()) for n in KEY_HEADERS)
        )
    except Exception:
        return None  # the full path answers with its error
    model = known.model
    policy = services.policies.resolve(principal.tenant, model)
    if (
        not known.matches(principal, policy)
        or not principal.may_use(model)
        or not services.provider.has_model(model)
    ):
        return None
    chat = ChatRequest(
        request_id=str(scope["state"]["request_id"]),
        principal=principal,
        model=model,
        body=known.body,
        policy=policy,
    )
    chat.reuse_derived(known.exact_key, known.turn, known.key_text)
    return chat
