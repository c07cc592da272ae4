"""Pure ASGI middleware: every `/v1/...` API route also answers without the prefix.

LiteLLM-proxy users have `base_url` set without `/v1` (`http://host:4000`), and some
clients append only `/chat/completions`. A path whose first segment is the first segment
of an API route under `/v1` (`chat`, `completions`, `models`, ..., and whatever another
door registers) and of no route outside it (`/healthz`, `/admin/...`) is routed as
`/v1` + path, before routing. The set is read from the app's routes on the first
request, so a router included later gets the alias without a line of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.api.endpoints import (
    OPENAI_ROOTS_NOT_SERVED,
    V1_PREFIX,
    first_api_segment,
    route_paths,
)


def aliased_roots(routes: Iterable[BaseRoute]) -> frozenset[str]:
    """First segments served under `/v1` and by no route outside it; OpenAI's roots the
    gateway does not implement too, so `/files` gets the same 404 as `/v1/files`."""
    inside: set[str] = set(OPENAI_ROOTS_NOT_SERVED)
    outside: set[str] = set()
    for path, _ in route_paths(routes):
        if path.startswith(V1_PREFIX + "/"):
            inside.add(first_api_segment(path))
        else:
            outside.add(path.lstrip("/").split("/", 1)[0])
    return frozenset(inside - outside)


class V1AliasMiddleware:
    def __init__(self, app: ASGIApp, routes: Callable[[], Iterable[BaseRoute]]) -> None:
        self.app = app
        self._routes = routes
        self._roots: frozenset[str] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if not path.startswith(V1_PREFIX + "/") and path != V1_PREFIX:
                if self._roots is None:
                    self._roots = aliased_roots(self._routes())
                if path.lstrip("/").split("/", 1)[0] in self._roots:
                    scope = dict(scope)
                    scope["path"] = V1_PREFIX + path
                    raw = scope.get("raw_path")
                    if isinstance(raw, bytes):
                        scope["raw_path"] = V1_PREFIX.encode() + raw
        await self.app(scope, receive, send)
