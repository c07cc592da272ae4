"""What the gateway serves, read from the app's own routes, for the answer to a path it
does not: a 404 in OpenAI's envelope that names the endpoints it has.

OpenAI routes the gateway does not implement (files, batches, audio, images, ...) are
not passed through to the provider: a caching gateway that forwarded a file upload or a
fine-tuning job to whichever provider a model name maps to would surprise everyone, and
none of them is cacheable. They get the same 404, with a message that says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from starlette.routing import BaseRoute, Route

V1_PREFIX = "/v1"

# OpenAI API roots (the first path segment after /v1) the gateway does not implement.
OPENAI_ROOTS_NOT_SERVED = frozenset(
    {
        "assistants",
        "audio",
        "batches",
        "containers",
        "evals",
        "files",
        "fine_tuning",
        "images",
        "moderations",
        "organization",
        "realtime",
        "threads",
        "uploads",
        "vector_stores",
        "videos",
    }
)
# `{model_id:path}` -> `{model_id}`: the converter means nothing to a client.
_CONVERTER = re.compile(r"\{(\w+):\w+\}")
# Longest path echoed back in a message (the rest is cut).
_MAX_ECHOED_PATH_CHARS = 200


def route_paths(routes: Iterable[BaseRoute], prefix: str = "") -> Iterator[tuple[str, set[str]]]:
    """(path, methods) of every HTTP route, also inside included routers: FastAPI keeps
    an included router as one entry holding the original router and its prefix."""
    for route in routes:
        if isinstance(route, Route):
            yield prefix + route.path, set(route.methods or ())
            continue
        included = getattr(route, "original_router", None)
        if included is not None:
            context = getattr(route, "include_context", None)
            inner = prefix + str(getattr(context, "prefix", "") or "")
            yield from route_paths(getattr(included, "routes", ()), inner)


def api_endpoints(routes: Iterable[BaseRoute]) -> list[str]:
    """`METHOD /v1/...` for every API route of the app (each also answers without the
    `/v1` prefix), in registration order."""
    endpoints: list[str] = []
    for path, methods in route_paths(routes):
        if not path.startswith(V1_PREFIX + "/"):
            continue
        for method in sorted(methods - {"HEAD"}):
            endpoint = f"{method} {_CONVERTER.sub(_plain_parameter, path)}"
            if endpoint not in endpoints:
                endpoints.append(endpoint)
    return endpoints


def _plain_parameter(match: re.Match[str]) -> str:
    return "{" + match.group(1) + "}"


def first_api_segment(path: str) -> str:
    """The API root of `path`, with or without the `/v1` prefix: `files` for both
    `/v1/files/abc` and `/files`."""
    if path == V1_PREFIX or path.startswith(V1_PREFIX + "/"):
        path = path[len(V1_PREFIX) :]
    return path.lstrip("/").split("/", 1)[0]


def not_found_message(method: str, path: str, routes: Iterable[BaseRoute]) -> tuple[str, str]:
    """The message and code of the 404 for `method path`."""
    echoed = path[:_MAX_ECHOED_PATH_CHARS]
    served = ", ".join(api_endpoints(routes))
    if first_api_segment(path) in OPENAI_ROOTS_NOT_SERVED:
        return (
            f"The gateway does not implement {method} {echoed} (it is not passed through to "
            f"the provider either). It serves: {served} (each also without /v1).",
            "unsupported_endpoint",
        )
    return (
        f"Unknown path: {method} {echoed}. The gateway serves: {served} (each also without /v1).",
        "not_found",
    )
