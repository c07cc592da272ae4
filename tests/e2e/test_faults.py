"""Faults: the gateway keeps answering, loses nothing and caches nothing wrong.

Every fault is driven over HTTP against the fake upstream (a real server on loopback):
upstream errors, timeouts, streams that break, stall or turn to garbage, clients that go
away mid-stream, a storage backend that dies, an embedder or reviewer that fails or
hangs, and a gateway process killed with SIGKILL and started again on the same data.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import orjson
import pytest
import yaml

from tests.e2e.helpers import (
    GatewayProcess,
    client_for,
    gateway_with_policies,
    unique_prompt,
    upstream_calls,
)
from tests.helpers import (
    ADMIN_KEY,
    TENANT_KEYS,
    FakeUpstream,
    GatewayFactory,
    RunningGateway,
    gateway_config_dict,
)

FORBIDDEN_FRAGMENTS = ("Traceback", 'File "', "sk-upstream-secret")
AUTH = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
# Stored answers are written after the response is sent: poll a little for them.
STORE_WAIT_SECONDS = 5.0


def _body(prompt: str, *, stream: bool = False) -> dict[str, Any]:
    return {
        "model": "fake-model",
        "messages": [{"role": "user", "content": prompt}],
        "stream": stream,
    }


def _post(url: str, prompt: str, *, stream: bool = False, timeout: float = 15) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/chat/completions",
        headers=AUTH,
        json=_body(prompt, stream=stream),
        timeout=timeout,
    )


def _assert_clean(text: str) -> None:
    for fragment in FORBIDDEN_FRAGMENTS:
        assert fragment not in text


def _assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    _assert_clean(response.text)
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "code"}
    assert error["message"] and error["type"]
    assert error["code"] == code
    return error  # type: ignore[no-any-return]


def _sse(text: str) -> tuple[list[dict[str, Any]], bool]:
    """The data events of an SSE body, and whether it ended with [DONE]."""
    events: list[dict[str, Any]] = []
    done = False
    for line in text.splitlines():
        if not line.startswith("data: "):
            continue
        data = line[len("data: ") :]
        if data == "[DONE]":
            done = True
            continue
        assert not done, "an event after [DONE]"
        events.append(orjson.loads(data))
    return events, done


def _assert_interrupted(response: httpx.Response) -> list[dict[str, Any]]:
    """A stream that started (200) and then broke: an in-band error event, no [DONE]."""
    assert response.status_code == 200, response.text
    _assert_clean(response.text)
    events, done = _sse(response.text)
    assert not done, "a broken stream must not end with [DONE]"
    assert events and "choices" in events[0], "the stream never started"
    error = events[-1]["error"]
    assert set(error) >= {"message", "type", "code"}
    assert error["code"] == "upstream_stream_interrupted"
    assert all("error" not in event for event in events[:-1])
    return events


def _app_services(gateway: RunningGateway) -> Any:
    """The running app's services (the app uvicorn was given by ThreadedServer)."""
    return gateway.server._server.config.app.state.services


# --- 1. upstream 500 and 429 ------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("marker", "status", "code", "exception"),
    [
        ("[[status:500]]", 502, "upstream_error", openai.InternalServerError),
        ("[[status:429]]", 429, "rate_limit_exceeded", openai.RateLimitError),
    ],
)
def test_upstream_error_statuses_reach_the_client_and_are_never_cached(
    gateway: RunningGateway,
    upstream: FakeUpstream,
    marker: str,
    status: int,
    code: str,
    exception: type[openai.APIStatusError],
    stream: bool,
) -> None:
    prompt = unique_prompt(f"Explain recursion briefly {marker}")
    client = client_for(gateway)
    before = upstream_calls(upstream, prompt)
    for _ in range(2):
        with pytest.raises(exception) as caught:
            client.chat.completions.create(
                model="fake-model", messages=[{"role": "user", "content": prompt}], stream=stream
            )
        assert caught.value.status_code == status
        _assert_envelope(caught.value.response, status, code)
    # Both reached the upstream: the failure was not cached.
    assert upstream_calls(upstream, prompt) == before + 2


# --- 2. upstream timeouts -----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_upstream_timeout_is_504_and_never_cached(
    start_gateway: GatewayFactory, upstream: FakeUpstream, stream: bool
) -> None:
    gateway = start_gateway(router_settings={"num_retries": 0, "timeout_seconds": 0.5})
    prompt = unique_prompt("Explain recursion briefly [[sleep:1.5]]")
    before = upstream_calls(upstream, prompt)
    for _ in range(2):
        started = time.monotonic()
        response = _post(gateway.url, prompt, stream=stream)
        assert time.monotonic() - started < 0.5 + 2.0
        _assert_envelope(response, 504, "upstream_timeout")
    assert upstream_calls(upstream, prompt) == before + 2


def test_a_stream_that_stalls_after_it_started_ends_with_an_error_event(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    gateway = start_gateway(router_settings={"num_retries": 0, "timeout_seconds": 0.5})
    prompt = unique_prompt("Explain recursion briefly [[slowstream:1.5]]")
    started = time.monotonic()
    response = _post(gateway.url, prompt, stream=True)
    assert time.monotonic() - started < 0.5 + 2.0
    _assert_interrupted(response)
    again = _post(gateway.url, prompt)
    assert again.headers["x-gateway-cache"] == "miss"


# --- 3. upstream closes mid-stream --------------------------------------------------------


def test_upstream_abort_mid_stream_ends_cleanly_and_is_not_cached(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt("Tell me about lighthouses [[abort]]")
    before = upstream_calls(upstream, prompt)
    response = _post(gateway.url, prompt, stream=True)
    events = _assert_interrupted(response)
    text = "".join(
        (choice.get("delta") or {}).get("content") or ""
        for event in events[:-1]
        for choice in event["choices"]
    )
    assert text.startswith("Answer #")  # the part that did arrive was passed on
    # The official client raises on the in-band error instead of hanging.
    with pytest.raises(openai.APIError):
        for _ in client_for(gateway).chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": prompt}], stream=True
        ):
            pass
    repeat = _post(gateway.url, prompt)
    assert repeat.status_code == 200
    assert repeat.headers["x-gateway-cache"] == "miss"
    assert upstream_calls(upstream, prompt) == before + 3


# --- 4. malformed SSE ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "marker", ["[[badsse]]", "[[badsse:garbage]]", "[[badsse:truncate]]", "[[badsse:error]]"]
)
def test_malformed_upstream_sse_ends_cleanly_and_is_not_cached(
    gateway: RunningGateway, upstream: FakeUpstream, marker: str
) -> None:
    prompt = unique_prompt(f"Tell me about lighthouses {marker}")
    before = upstream_calls(upstream, prompt)
    response = _post(gateway.url, prompt, stream=True, timeout=10)
    _assert_interrupted(response)
    repeat = _post(gateway.url, prompt)
    assert repeat.status_code == 200
    assert repeat.headers["x-gateway-cache"] == "miss"
    assert upstream_calls(upstream, prompt) == before + 2


@pytest.mark.parametrize("marker", ["[[nosse]]", "[[nosse:empty]]", "[[nosse:json]]"])
def test_a_stream_answer_without_events_is_an_error_and_not_cached(
    gateway: RunningGateway, upstream: FakeUpstream, marker: str
) -> None:
    # A 200 that holds no event at all (a proxy's HTML page, an empty body, a JSON body)
    # is no answer: it must not reach the client, or the cache, as an empty one.
    prompt = unique_prompt(f"Tell me about lighthouses {marker}")
    before = upstream_calls(upstream, prompt)
    for _ in range(2):
        response = _post(gateway.url, prompt, stream=True, timeout=10)
        _assert_envelope(response, 502, "upstream_error")
    assert upstream_calls(upstream, prompt) == before + 2
    with pytest.raises(openai.InternalServerError):
        client_for(gateway).chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": prompt}],
            stream=True,
            stream_options={"include_usage": True},
        )


# --- 5. client disconnects mid-stream -----------------------------------------------------


def _decision(gateway: RunningGateway, request_id: str) -> dict[str, Any] | None:
    response = httpx.get(
        f"{gateway.url}/admin/decisions?limit=1000",
        headers={"authorization": f"Bearer {ADMIN_KEY}"},
        timeout=10,
    )
    assert response.status_code == 200
    for record in response.json()["data"]:
        if record["request_id"] == request_id:
            return record  # type: ignore[no-any-return]
    return None


def _wait_for_decision(gateway: RunningGateway, request_id: str) -> dict[str, Any]:
    """The request's decision record: written once its response (and, for a miss, the
    cache write that follows it) is done."""
    deadline = time.monotonic() + STORE_WAIT_SECONDS
    while (record := _decision(gateway, request_id)) is None:
        assert time.monotonic() < deadline, "no decision record"
        time.sleep(0.05)
    return record


def test_client_disconnect_mid_stream_stores_nothing_and_the_gateway_keeps_serving(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    delay = 0.1
    prompt = unique_prompt(f"Name a long river [[slowstream:{delay}]]")
    # Role chunk, one chunk per word, finish chunk: what the whole stream would take.
    full_stream_seconds = delay * (len(f"Answer #1: {prompt}".split(" ")) + 1)
    before = upstream_calls(upstream, prompt)
    with (
        httpx.Client(timeout=10) as http,
        http.stream(
            "POST",
            f"{gateway.base_url}/chat/completions",
            headers=AUTH,
            json=_body(prompt, stream=True),
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["x-gateway-cache"] == "miss"
        request_id = response.headers["x-request-id"]
        first = next(line for line in response.iter_lines() if line.startswith("data: "))
        assert orjson.loads(first[len("data: ") :])["object"] == "chat.completion.chunk"
        # Leaving both blocks closes the connection after the first chunk.
    disconnected_at = time.monotonic()
    record = _wait_for_decision(gateway, request_id)
    assert record["status"] == 499 and record["stored"] is False  # 499: client went away
    # Long enough for the upstream stream to have ended had it not been cancelled.
    time.sleep(max(0.0, disconnected_at + full_stream_seconds + 0.3 - time.monotonic()))
    repeat = _post(gateway.url, prompt)  # same cache key; non-streamed: answered at once
    assert repeat.status_code == 200
    assert repeat.headers["x-gateway-cache"] == "miss"
    assert upstream_calls(upstream, prompt) == before + 2
    other = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": unique_prompt()}]
    )
    assert other.http_response.status_code == 200
    assert other.parse().choices[0].message.content


# --- 6. the embedded store fails at run time ----------------------------------------------


def _break_embedded_store(gateway: RunningGateway) -> None:
    """Close the SQLite connections under the exact cache and the vector index, on their
    own worker threads: every later query raises, like a disk that went away."""
    storage = _app_services(gateway).storage
    for database in (storage.exact._db, storage.vectors._db):
        database._executor.submit(database.connection.close).result(timeout=5)


def _wait_for_exact(gateway: RunningGateway, prompt: str) -> httpx.Response:
    deadline = time.monotonic() + STORE_WAIT_SECONDS
    while True:
        response = _post(gateway.url, prompt)
        assert response.status_code == 200
        if response.headers["x-gateway-cache"] == "exact" or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


@pytest.mark.parametrize("storage_backend", ["embedded"])
def test_embedded_store_failure_fails_open(
    gateway: RunningGateway, upstream: FakeUpstream, storage_backend: str
) -> None:
    stored = unique_prompt("What is a monad")
    assert _post(gateway.url, stored).headers["x-gateway-cache"] == "miss"
    assert _wait_for_exact(gateway, stored).headers["x-gateway-cache"] == "exact"
    before = upstream_calls(upstream, stored)

    _break_embedded_store(gateway)
    client = client_for(gateway)
    for text in [*(unique_prompt("What is a functor") for _ in range(3)), stored]:
        raw = client.chat.completions.with_raw_response.create(
            model="fake-model", messages=[{"role": "user", "content": text}]
        )
        assert raw.http_response.status_code == 200
        _assert_clean(raw.http_response.text)
        assert raw.headers["x-gateway-cache"] == "miss"
        assert raw.headers["x-gateway-cache-reason"] == "store_unavailable"
        assert raw.parse().choices[0].message.content
    streamed = _post(gateway.url, unique_prompt("What is an arrow"), stream=True)
    assert streamed.status_code == 200
    assert streamed.headers["x-gateway-cache-reason"] == "store_unavailable"
    events, done = _sse(streamed.text)
    assert done and all("error" not in event for event in events)
    assert upstream_calls(upstream, stored) == before + 1  # answered by the provider
    ready = httpx.get(f"{gateway.url}/readyz", timeout=10).json()
    assert ready["status"] == "degraded" and ready["storage"]["available"] is False


# --- 7. embedder and reviewer fail or hang ------------------------------------------------

EMBED_TIMEOUT = 0.5
REVIEW_TIMEOUT = 0.5


def _policy(semantic_cache: str) -> str:
    return f'version: "1"\nsemantic_cache: {{{semantic_cache}}}\n'


def _timed_ask(gateway: RunningGateway, text: str) -> tuple[float, Any]:
    started = time.monotonic()
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": text}]
    )
    return time.monotonic() - started, raw


@pytest.fixture
def litellm_embedder_gateway(start_gateway: GatewayFactory, tmp_path: Path) -> RunningGateway:
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"default.yaml": _policy(f"embed_timeout_seconds: {EMBED_TIMEOUT}")},
        semantic={"embedder": "fake-embedder", "embedding_dimensions": 8},
        # Longer than the fake's sleeps: only the policy's bound can cut the wait short.
        router_settings={"num_retries": 0, "timeout_seconds": 10},
    )
    return gateway


@pytest.mark.parametrize(
    ("marker", "slow"), [("[[embed_status:500]]", False), ("[[embed_sleep:3]]", True)]
)
def test_embedder_failure_or_hang_is_a_miss_within_the_bound(
    litellm_embedder_gateway: RunningGateway, upstream: FakeUpstream, marker: str, slow: bool
) -> None:
    gateway = litellm_embedder_gateway
    healthy = unique_prompt("How do tides work?")
    elapsed, raw = _timed_ask(gateway, healthy)
    assert raw.headers["x-gateway-cache-reason"] == "no_candidate"  # the embedder works
    embeddings_before = len(upstream.log.embedding_bodies)

    prompt = unique_prompt(f"How do tides work? {marker}")
    elapsed, raw = _timed_ask(gateway, prompt)
    assert raw.http_response.status_code == 200
    assert raw.headers["x-gateway-cache"] == "miss"
    assert raw.headers["x-gateway-cache-reason"] == "embedder_unavailable"
    assert raw.parse().choices[0].message.content.endswith(prompt)  # a fresh answer
    assert len(upstream.log.embedding_bodies) > embeddings_before  # it was asked
    # Bounded by the policy's embed timeout, not by the embedder (3 s) or the router (10 s).
    assert elapsed < EMBED_TIMEOUT + 2.0
    if slow:
        assert elapsed >= EMBED_TIMEOUT
    # The complete answer still went to the exact layer, which needs no embedder.
    assert _wait_for_exact(gateway, prompt).headers["x-gateway-cache"] == "exact"


def _gateway_with_judge(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path, judge: str
) -> RunningGateway:
    models = gateway_config_dict(upstream.url, tmp_path)["model_list"]
    judge_model = {
        "model_name": judge,
        "litellm_params": {
            "model": f"openai/{judge}",
            "api_base": f"{upstream.url}/v1",
            "api_key": "sk-upstream-secret-123456",
        },
    }
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        # A review band over the whole top of the scale: the pair below goes to the judge.
        {
            "default.yaml": _policy(
                "accept_threshold: 0.9999, review_min_similarity: 0.9, "
                f"review: {{timeout_seconds: {REVIEW_TIMEOUT}}}"
            )
        },
        model_list=[*models, judge_model],
        semantic={"embedder": "local", "reviewer": judge},
        router_settings={"num_retries": 0, "timeout_seconds": 10},
    )
    return gateway


@pytest.mark.parametrize("judge", ["fake-judge-slow", "fake-judge-error"])
def test_reviewer_failure_or_hang_is_a_miss_within_the_bound(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path, judge: str
) -> None:
    gateway = _gateway_with_judge(start_gateway, upstream, tmp_path, judge)
    # This pair lands in that review band, its entities agree and one content word
    # differs, which a reviewer must settle (test_semantic_cache.py).
    stored, asked = "中国的首都是哪个城市？", "中国的首都是哪个都市？"
    _, first = _timed_ask(gateway, stored)
    assert first.headers["x-gateway-cache"] == "miss"
    assert _wait_for_decision(gateway, first.headers["x-request-id"])["stored"] is True
    judge_calls = sum(body["model"] == judge for body in upstream.log.chat_bodies)
    elapsed, raw = _timed_ask(gateway, asked)
    assert raw.http_response.status_code == 200
    assert raw.headers["x-gateway-cache"] == "miss"
    assert raw.headers["x-gateway-cache-reason"] == "review_unavailable"
    answer = raw.parse().choices[0].message.content
    assert answer != first.parse().choices[0].message.content and answer.endswith(asked)
    assert sum(body["model"] == judge for body in upstream.log.chat_bodies) > judge_calls
    record = _wait_for_decision(gateway, raw.headers["x-request-id"])
    assert record["review_verdict"] == "unavailable"
    # Bounded by the policy's review timeout, not by the judge (3 s) or the router (10 s).
    assert elapsed < REVIEW_TIMEOUT + 2.0
    if judge == "fake-judge-slow":
        assert elapsed >= REVIEW_TIMEOUT


# --- 8. the gateway process is killed and started again -----------------------------------


@pytest.fixture
def gateway_processes() -> Iterator[list[GatewayProcess]]:
    started: list[GatewayProcess] = []
    yield started
    for process in started:
        process.kill()


def test_kill_9_and_restart_keeps_the_embedded_cache_and_memories(
    upstream: FakeUpstream, tmp_path: Path, gateway_processes: list[GatewayProcess]
) -> None:
    data_dir = tmp_path / "data"
    raw = gateway_config_dict(upstream.url, data_dir)
    raw["server"] = {"log_level": "warning"}
    config_path = tmp_path / "gateway.yaml"
    config_path.write_text(yaml.safe_dump(raw))
    log_path = tmp_path / "gateway.log"
    stored = unique_prompt("How do I merge two dictionaries in Python?")
    paraphrase = stored.replace("How do I", "How can I")
    memories = ["Prefers aisle seats on long flights.", "Works in the Lisbon office."]

    first = GatewayProcess(config_path, log_path)
    gateway_processes.append(first)
    answer = _post(first.url, stored)
    assert answer.headers["x-gateway-cache"] == "miss"
    content = answer.json()["choices"][0]["message"]["content"]
    # Both layers hold the answer before the kill (the write follows the response).
    deadline = time.monotonic() + STORE_WAIT_SECONDS
    while _post(first.url, paraphrase).headers["x-gateway-cache"] != "semantic":
        assert time.monotonic() < deadline, "the answer was never stored"
        time.sleep(0.05)
    created = httpx.post(
        f"{first.url}/v1/memories",
        headers=AUTH,
        json={"user": "u1", "items": [{"content": text} for text in memories]},
        timeout=15,
    )
    assert created.status_code == 201, created.text
    first.kill()

    second = GatewayProcess(config_path, log_path)
    gateway_processes.append(second)
    calls = upstream_calls(upstream, stored)
    exact = _post(second.url, stored)
    assert exact.headers["x-gateway-cache"] == "exact"
    assert exact.json()["choices"][0]["message"]["content"] == content
    semantic = _post(second.url, paraphrase)
    assert semantic.headers["x-gateway-cache"] == "semantic"
    assert semantic.json()["choices"][0]["message"]["content"] == content
    assert upstream_calls(upstream, stored) == calls
    listed = httpx.get(f"{second.url}/v1/memories?user=u1", headers=AUTH, timeout=15)
    assert listed.status_code == 200
    assert sorted(item["content"] for item in listed.json()["data"]) == sorted(memories)
    second.kill()  # and once more, so the files are checked as a crash leaves them

    files = sorted(data_dir.glob("*.sqlite3"))
    assert {path.name for path in files} >= {"gateway.sqlite3", "memory.sqlite3"}
    assert any(path.name.startswith("semantic-") for path in files)
    for path in files:
        connection = sqlite3.connect(path)
        try:
            assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)], path
        finally:
            connection.close()


@pytest.mark.parametrize("storage_backend", ["embedded"])
def test_memory_api_answers_503_when_the_embedded_store_fails(
    gateway: RunningGateway, storage_backend: str
) -> None:
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    created = httpx.post(
        f"{gateway.base_url}/memories",
        headers=headers,
        json={"user": "u1", "content": "Prefers tea."},
        timeout=30,
    )
    assert created.status_code == 201
    memory_db = _app_services(gateway).memory.store._db  # type: ignore[attr-defined]
    memory_db._executor.submit(memory_db.connection.close).result(timeout=5)
    for method, path, kwargs in (
        ("GET", "/memories", {"params": {"user": "u1"}}),
        ("POST", "/memories", {"json": {"user": "u1", "content": "x"}}),
        ("POST", "/memories/search", {"json": {"user": "u1", "query": "tea"}}),
    ):
        response = httpx.request(
            method, f"{gateway.base_url}{path}", headers=headers, timeout=30, **kwargs
        )
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "store_unavailable"
    # Chat naming the user still answers, without memory.
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[{"role": "user", "content": unique_prompt("Do I like tea?")}],
        extra_headers={"x-gateway-user": "u1"},
    )
    assert raw.http_response.status_code == 200
    assert raw.headers["x-gateway-memory-tokens"] == "0"
