"""Fuzz the HTTP API of one running gateway: zero 5xx, zero crashes, every error in
OpenAI's envelope.

Hypothesis generates the requests with a fixed seed and a bounded number of cases, so a
run is repeatable; each test starts one gateway (embedded storage: the backends are
compared request by request in test_bad_input.py) and sends every case to it.

- Bodies come from the request models' JSON schemas (`ChatCompletionRequest`,
  `EmbeddingRequest`, `MemoryIn`/`MemoryBatchIn`, `MemorySearchIn`, `PurgeRequest`), so
  a field added to a model is fuzzed without editing this file; some are sent as
  generated, the rest mutated (a field dropped, retyped or added, the whole body
  replaced by other JSON, the bytes truncated or corrupted).
- Routes and methods come from the gateway's own `/openapi.json`, so a new route is
  fuzzed too: random methods, paths under the known routes, query strings, headers and
  bodies.

No generated string holds `[[` (the fake upstream's `[[status:...]]`/`[[sleep:...]]`
markers, which make real 502/504s), and no model is the config's `unreachable-model`
(a real 502): any 5xx is a gateway bug.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from gateway.api.admin import PurgeRequest
from gateway.api.anthropic_errors import speaks_anthropic
from gateway.api.memory_schemas import MemoryBatchIn, MemoryIn, MemorySearchIn
from gateway.api.schemas import ChatCompletionRequest, EmbeddingRequest
from tests.e2e.errors import UVICORN_REJECT, error_of, unexpected_errors
from tests.helpers import ADMIN_KEY, TENANT_KEYS, RunningGateway

FUZZ_SEED = 20260601
BODY_CASES = 2500
ROUTE_CASES = 1500
LEAKS = ("Traceback", "sk-upstream-secret")
# Not in the OpenAPI document (include_in_schema=False) but served all the same.
UNLISTED_ROUTES = [("GET", "/dashboard"), ("GET", "/openapi.json")]
MODELS = ["fake-model", "fake-embedder", "fake-judge-yes", "fake-judge-no"]
KEYS = [TENANT_KEYS["acme"], TENANT_KEYS["globex"], ADMIN_KEY, None, "sk-not-a-key"]
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]

pytestmark = pytest.mark.parametrize("storage_backend", ["embedded"])

FUZZ_SETTINGS = settings(
    deadline=None,
    database=None,  # no replay of earlier failures: every run is the seed's run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- JSON values ---------------------------------------------------------------------


def _no_marker(text: str) -> bool:
    return "[[" not in text


texts = st.text(max_size=24).filter(_no_marker)
keys = st.text(max_size=12).filter(_no_marker)
json_scalars = (
    st.none()
    | st.booleans()
    # Beyond 64 bits orjson reads a float; 1e308 and 10**30 both reach the cache key.
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)


def from_schema(
    schema: dict[str, Any],
    defs: dict[str, Any],
    overrides: dict[str, st.SearchStrategy[Any]],
) -> st.SearchStrategy[Any]:
    """Values valid for a pydantic-made JSON schema (the subset pydantic writes);
    `overrides` replaces the strategy of properties by name, at any depth."""
    if "$ref" in schema:
        target = defs[schema["$ref"].rsplit("/", 1)[-1]]
        return st.deferred(lambda: from_schema(target, defs, overrides))
    if "anyOf" in schema:
        return st.one_of([from_schema(option, defs, overrides) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "string":
        low = schema.get("minLength", 0)
        high = max(low, min(schema.get("maxLength", 24), 24))
        return st.text(min_size=low, max_size=high).filter(_no_marker)
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum"), max_value=schema.get("maximum"))
    if kind == "number":
        return st.floats(
            min_value=schema.get("minimum"),
            max_value=schema.get("maximum"),
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = from_schema(schema.get("items", {}), defs, overrides)
        low = schema.get("minItems", 0)
        return st.lists(items, min_size=low, max_size=max(low, min(schema.get("maxItems", 3), 3)))
    if kind == "object":
        properties = schema.get("properties", {})
        if not properties:
            return st.dictionaries(keys, json_values, max_size=3)
        required = set(schema.get("required", ()))

        def strategy(name: str, sub: dict[str, Any]) -> st.SearchStrategy[Any]:
            override = overrides.get(name)
            return override if override is not None else from_schema(sub, defs, overrides)

        return st.fixed_dictionaries(
            {name: strategy(name, sub) for name, sub in properties.items() if name in required},
            optional={
                name: strategy(name, sub)
                for name, sub in properties.items()
                if name not in required
            },
        )
    return json_values


def schema_bodies(
    schema_of: type[BaseModel], **overrides: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    schema = schema_of.model_json_schema()
    strategy: st.SearchStrategy[dict[str, Any]] = from_schema(
        schema, schema.get("$defs", {}), overrides
    )
    return strategy


# Overrides that let a good share of the cases reach the pipeline instead of stopping
# at validation (the schema alone makes random model names: all 404s).
identifiers = st.sampled_from(["u1", "u2", "user@example.com", "ünï", "a b"]) | st.text(
    min_size=1, max_size=10
).filter(_no_marker)
words = st.lists(
    st.sampled_from(["what", "is", "the", "capital", "of", "France", "my", "order", "today"]),
    min_size=1,
    max_size=8,
).map(" ".join)
prompts = words | texts
content_parts = st.lists(
    st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": prompts}),
        st.fixed_dictionaries(
            {"type": st.just("image_url"), "image_url": st.just({"url": "data:,"})}
        ),
        st.dictionaries(keys, json_values, max_size=3),
    ),
    max_size=3,
)
models = st.one_of(st.sampled_from(MODELS), st.sampled_from(MODELS), texts)
CHAT_BODIES = schema_bodies(
    ChatCompletionRequest,
    model=models,
    content=st.one_of(prompts, content_parts, st.none()),
    user=identifiers,
    # Bound for speed: every message is classified, normalised, forwarded.
    messages=st.lists(
        st.fixed_dictionaries(
            {
                "role": st.sampled_from(["system", "user", "assistant", "tool", "developer"]),
                "content": st.one_of(prompts, content_parts, st.none()),
            }
        )
        | from_schema(
            ChatCompletionRequest.model_json_schema()["$defs"]["ChatMessage"],
            ChatCompletionRequest.model_json_schema()["$defs"],
            {"content": prompts},
        ),
        min_size=1,
        max_size=4,
    ),
)
EMBEDDING_BODIES = schema_bodies(EmbeddingRequest, model=models, user=identifiers)
MEMORY_TIMES = st.datetimes().map(lambda moment: moment.isoformat()) | texts
MEMORY_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "user": identifiers,
    "content": prompts,
    "created_at": MEMORY_TIMES,
    "valid_from": MEMORY_TIMES,
    "valid_to": MEMORY_TIMES,
}
MEMORY_BODIES = schema_bodies(MemoryIn, **MEMORY_FIELDS) | schema_bodies(
    MemoryBatchIn, **MEMORY_FIELDS
)
SEARCH_BODIES = schema_bodies(MemorySearchIn, user=identifiers, query=prompts)
PURGE_BODIES = schema_bodies(PurgeRequest, model=models)

BODIES: dict[tuple[str, str], st.SearchStrategy[dict[str, Any]]] = {
    ("POST", "/v1/chat/completions"): CHAT_BODIES,
    ("POST", "/v1/embeddings"): EMBEDDING_BODIES,
    ("POST", "/v1/memories"): MEMORY_BODIES,
    ("POST", "/v1/memories/search"): SEARCH_BODIES,
    ("POST", "/admin/cache/purge"): PURGE_BODIES,
}


@st.composite
def mutated(draw: st.DrawFn, bodies: st.SearchStrategy[dict[str, Any]]) -> bytes:
    """A body as generated, or with one thing wrong with it."""
    body: Any = draw(bodies)
    # Half as generated: those reach the pipeline; the other half is wrong in one way.
    how = draw(st.sampled_from(["as is"] * 5 + ["drop", "retype", "add", "replace", "bytes"]))
    if how == "drop" and body:
        body.pop(draw(st.sampled_from(sorted(body))))
    elif how == "retype" and body:
        target = body
        # One level down into a message half of the time, where the types are richest.
        messages = body.get("messages")
        if isinstance(messages, list) and messages and isinstance(messages[0], dict):
            target = draw(st.sampled_from([body, messages[0]]))
        if target:
            target[draw(st.sampled_from(sorted(target)))] = draw(json_values)
    elif how == "add":
        body[draw(keys)] = draw(json_values)
    elif how == "replace":
        body = draw(json_values)
    raw = json.dumps(body, ensure_ascii=draw(st.booleans())).encode()
    if how == "bytes" and raw:
        position = draw(st.integers(min_value=0, max_value=len(raw) - 1))
        damage = draw(st.sampled_from(["truncate", "insert", "replace"]))
        byte = bytes([draw(st.integers(min_value=0, max_value=255))])
        if damage == "truncate":
            raw = raw[:position]
        elif damage == "insert":
            raw = raw[:position] + byte + raw[position:]
        else:
            raw = raw[:position] + byte + raw[position + 1 :]
    return raw


# --- headers, queries, paths ---------------------------------------------------------

# What h11 (httpx's HTTP/1.1) agrees to send: no NUL, CR, LF, and no other whitespace
# than inner spaces and tabs. Other control characters are sent; the server refuses them.
_SENDABLE = re.compile(rb"(?:[^\x00\s](?:[^\x00\s]|[ \t])*)?(?<![ \t])")
header_values = st.one_of(
    identifiers.map(lambda text: text.encode()),
    st.text(max_size=16).map(lambda text: text.encode()),
    st.binary(max_size=16),
).filter(lambda value: _SENDABLE.fullmatch(value) is not None)
HEADER_NAMES = [
    "x-gateway-user",
    "x-gateway-session",
    "x-gateway-namespace",
    "x-gateway-tenant",
    "x-request-id",
    "cache-control",
    "content-type",
    "accept",
]
header_sets = st.just({}) | st.dictionaries(
    st.sampled_from(HEADER_NAMES), header_values, max_size=4
)
QUERY_NAMES = ["limit", "offset", "user", "tag", "namespace", "tenant", "layer"]
query_values = (
    st.integers(min_value=-5, max_value=2000).map(str)
    | st.text(max_size=12)
    | st.sampled_from(["²", "١", "9" * 5000, "", "%zz"])
)
queries = st.dictionaries(st.sampled_from(QUERY_NAMES) | keys, query_values, max_size=3).map(
    urlencode
)
segments = st.text(max_size=20).map(lambda text: quote(text, safe=""))


# --- sending and checking ------------------------------------------------------------


def send(
    client: httpx.Client,
    method: str,
    path: str,
    *,
    key: str | None,
    headers: dict[str, bytes],
    query: str = "",
    content: bytes | None = None,
) -> httpx.Response:
    sent: list[tuple[str, bytes]] = list(headers.items())
    if key is not None:
        sent.append(("authorization", f"Bearer {key}".encode()))
    url = f"{path}?{query}" if query else path
    return client.request(method, url, headers=sent, content=content)


def refused_by_the_http_server(response: httpx.Response) -> bool:
    """uvicorn's own plain 400 for a request it cannot parse (a control character in
    a header value): the app never ran, so there is no envelope and no request id."""
    return (
        response.status_code == 400
        and "x-request-id" not in response.headers
        and response.headers.get("content-type", "").startswith("text/plain")
        and response.text in ("", UVICORN_REJECT)  # "" for HEAD
    )


def assert_sane(response: httpx.Response) -> None:
    """No 5xx; every error in the envelope, with a request id; nothing leaked."""
    request = response.request
    where = f"{request.method} {request.url} -> {response.status_code}: {response.text[:300]}"
    if refused_by_the_http_server(response):
        return  # a header value the gateway never saw
    assert response.status_code < 500, where
    assert response.headers.get("x-request-id"), where
    for leak in LEAKS:
        assert leak not in response.text, where
    if response.status_code >= 400 and request.method != "HEAD":
        try:
            path = request.url.path  # (the routes answer without `/v1` too)
            if speaks_anthropic(path) or speaks_anthropic("/v1" + path):
                anthropic_error_of(response)
            else:
                error_of(response)
        except AssertionError as exc:
            raise AssertionError(f"{where}\n{exc}") from None


def anthropic_error_of(response: httpx.Response) -> dict[str, Any]:
    """Anthropic's envelope (`{"type": "error", "error": {"type", "message"}}`), which
    the `/v1/messages` routes answer errors in."""
    assert response.headers.get("content-type", "").startswith("application/json")
    body = response.json()
    assert body.get("type") == "error", body
    error = body["error"]
    assert isinstance(error["type"], str) and error["type"]
    assert isinstance(error["message"], str) and error["message"]
    return dict(error)


def assert_still_serving(client: httpx.Client) -> None:
    assert client.get("/healthz").status_code == 200
    response = client.post(
        "/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"model": "fake-model", "messages": [{"role": "user", "content": "Say hi."}]},
    )
    assert response.status_code == 200, response.text


@pytest.fixture
def client(gateway: RunningGateway, caplog: pytest.LogCaptureFixture) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        yield client
    # Also none after an answer had started (streams, background cache writes).
    assert not unexpected_errors(caplog)


def run_fuzz(
    test: Callable[[], None], client: httpx.Client, label: str, statuses: dict[int, int]
) -> None:
    """Run the Hypothesis test; report what came back (see it with `pytest -s`); check
    that the gateway still serves."""
    started = time.monotonic()
    test()
    elapsed = time.monotonic() - started
    print(
        f"{label}: {sum(statuses.values())} requests in {elapsed:.1f}s, {sorted(statuses.items())}"
    )
    assert_still_serving(client)


def test_fuzz_bodies_from_the_request_schemas(client: httpx.Client) -> None:
    routes = sorted(BODIES)
    statuses: dict[int, int] = {}

    @seed(FUZZ_SEED)
    @settings(FUZZ_SETTINGS, max_examples=BODY_CASES)
    @given(
        route=st.sampled_from(routes),
        data=st.data(),
        # Mostly a tenant's key: the point is to get past authentication.
        key=st.sampled_from(KEYS[:1]) | st.sampled_from(KEYS),
        headers=st.just({"x-gateway-user": b"u1"}) | header_sets,
    )
    def fuzz(
        route: tuple[str, str], data: st.DataObject, key: str | None, headers: dict[str, bytes]
    ) -> None:
        method, path = route
        body = data.draw(mutated(BODIES[route]), label="body")
        if path.startswith("/admin"):
            key = ADMIN_KEY if key is not None else None
        response = send(client, method, path, key=key, headers=headers, content=body)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        assert_sane(response)

    run_fuzz(fuzz, client, "schema bodies", statuses)
    assert sum(statuses.values()) >= BODY_CASES
    assert statuses.get(200, 0) + statuses.get(201, 0) > BODY_CASES // 10, statuses


def test_fuzz_every_route_in_the_openapi_document(client: httpx.Client) -> None:
    document = client.get("/openapi.json")
    assert document.status_code == 200
    documented = [
        (method.upper(), path)
        for path, operations in document.json()["paths"].items()
        for method in operations
    ]
    assert ("POST", "/v1/chat/completions") in documented, documented
    routes = sorted(set(documented) | set(UNLISTED_ROUTES))
    statuses: dict[int, int] = {}

    @st.composite
    def requests(draw: st.DrawFn) -> tuple[str, str, bytes | None]:
        method, template = draw(st.sampled_from(routes))
        path = re.sub(r"\{[^}]+\}", lambda _: draw(segments) or "x", template)
        shape = draw(st.sampled_from(["as is", "as is", "extra segment", "last replaced"]))
        if shape == "extra segment":
            path = f"{path.rstrip('/')}/{draw(segments)}"
        elif shape == "last replaced":
            path = f"{path.rsplit('/', 1)[0]}/{draw(segments)}"
        if draw(st.integers(min_value=0, max_value=4)) == 0:
            method = draw(st.sampled_from(METHODS))
        if (method, template) in BODIES and draw(st.booleans()):
            body: bytes | None = draw(mutated(BODIES[(method, template)]))
        else:
            body = draw(
                st.none()
                | json_values.map(lambda value: json.dumps(value).encode())
                | st.binary(max_size=64)
            )
        return method, path, body

    @seed(FUZZ_SEED)
    @settings(FUZZ_SETTINGS, max_examples=ROUTE_CASES)
    @given(
        request=requests(),
        key=st.sampled_from(KEYS),
        headers=header_sets,
        query=queries,
    )
    def fuzz(
        request: tuple[str, str, bytes | None],
        key: str | None,
        headers: dict[str, bytes],
        query: str,
    ) -> None:
        method, path, body = request
        response = send(client, method, path, key=key, headers=headers, query=query, content=body)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        assert_sane(response)

    run_fuzz(fuzz, client, "openapi routes", statuses)
    assert sum(statuses.values()) >= ROUTE_CASES
