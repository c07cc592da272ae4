"""Errors reach clients in OpenAI's envelope with the right status; auth by bearer key."""

from __future__ import annotations

import httpx
import openai
import pytest

from tests.e2e.helpers import client_for, unique_prompt
from tests.helpers import ADMIN_KEY, FakeUpstream, GatewayFactory, RunningGateway

SECRET_FRAGMENTS = ("sk-upstream-secret", "Traceback", 'File "')


def _post(
    gateway: RunningGateway, body: object, key: str | None = "sk-acme-1", **kw: object
) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    headers.update(kw.pop("headers", {}))  # type: ignore[arg-type]
    return httpx.post(
        f"{gateway.base_url}/chat/completions",
        headers=headers,
        json=body,
        timeout=10,
        **kw,  # type: ignore[arg-type]
    )


def _assert_envelope(response: httpx.Response, status: int, code: str | None = None) -> dict:  # type: ignore[type-arg]
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "code"}
    assert error["message"]
    if code is not None:
        assert error["code"] == code
    for fragment in SECRET_FRAGMENTS:
        assert fragment not in response.text
    assert response.headers["x-request-id"]
    return error  # type: ignore[no-any-return]


def _chat(prompt: str, model: str = "fake-model", **extra: object) -> dict:  # type: ignore[type-arg]
    return {"model": model, "messages": [{"role": "user", "content": prompt}], **extra}


def test_missing_and_wrong_keys_are_401(gateway: RunningGateway) -> None:
    _assert_envelope(_post(gateway, _chat("hi"), key=None), 401, "missing_api_key")
    _assert_envelope(_post(gateway, _chat("hi"), key="sk-wrong"), 401, "invalid_api_key")
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=gateway.base_url, api_key="sk-wrong", max_retries=0).models.list()


def test_no_tenants_means_open_default_tenant(start_gateway: GatewayFactory) -> None:
    gateway = start_gateway(auth={"tenants": [], "admin_keys": []})
    response = _post(gateway, _chat(unique_prompt()), key=None)
    assert response.status_code == 200
    assert response.headers["x-gateway-cache"] == "miss"


def test_admin_key_is_accepted(gateway: RunningGateway) -> None:
    assert _post(gateway, _chat(unique_prompt()), key=ADMIN_KEY).status_code == 200


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": [{"role": "user", "content": "hi"}]}, "model"),
        ({"model": "fake-model", "messages": []}, "messages"),
        (
            {"model": "fake-model", "messages": [{"role": "wizard", "content": "hi"}]},
            "messages.0.role",
        ),
        (
            {
                "model": "fake-model",
                "messages": [{"role": "user", "content": "hi"}],
                "temperature": "hot",
            },
            "temperature",
        ),
        (
            {
                "model": "fake-model",
                "messages": [{"role": "user", "content": "hi"}],
                "stream": "yes",
            },
            "stream",
        ),
        ({"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "n": 0}, "n"),
        ([1, 2, 3], None),
    ],
)
def test_schema_errors_are_400(gateway: RunningGateway, body: object, param: str | None) -> None:
    error = _assert_envelope(_post(gateway, body), 400)
    assert error["type"] == "invalid_request_error"
    if param is not None:
        assert error["param"] == param


def test_invalid_json_and_invalid_utf8_are_400(gateway: RunningGateway) -> None:
    for content in (b"{not json", b'{"model": "fake-model", "messages": "\xff\xfe"}', b""):
        response = httpx.post(
            f"{gateway.base_url}/chat/completions",
            headers={"authorization": "Bearer sk-acme-1", "content-type": "application/json"},
            content=content,
        )
        _assert_envelope(response, 400)


def test_body_over_the_limit_is_413(start_gateway: GatewayFactory) -> None:
    gateway = start_gateway(server={"max_request_bytes": 2048})
    response = _post(gateway, _chat("x" * 5000))
    _assert_envelope(response, 413, "request_too_large")


def test_unknown_model_is_404_model_not_found(gateway: RunningGateway) -> None:
    _assert_envelope(_post(gateway, _chat("hi", model="no-such-model")), 404, "model_not_found")
    with pytest.raises(openai.NotFoundError):
        client_for(gateway).chat.completions.create(
            model="no-such-model", messages=[{"role": "user", "content": "hi"}]
        )


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("marker", "status", "code"),
    [
        ("[[status:500]]", 502, "upstream_error"),
        ("[[status:503]]", 502, None),
        ("[[status:429]]", 429, "rate_limit_exceeded"),
        ("[[sleep:3]]", 504, "upstream_timeout"),
    ],
)
def test_upstream_failures_map_to_statuses(
    gateway: RunningGateway, marker: str, status: int, code: str | None, stream: bool
) -> None:
    prompt = unique_prompt(f"hello {marker}")
    response = _post(gateway, _chat(prompt, stream=stream))
    _assert_envelope(response, status, code)


def test_unreachable_upstream_is_502(gateway: RunningGateway) -> None:
    _assert_envelope(_post(gateway, _chat("hi", model="unreachable-model")), 502)


def test_failed_requests_are_not_cached(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    prompt = unique_prompt("hello [[status:500]]")
    for _ in range(2):
        _assert_envelope(_post(gateway, _chat(prompt)), 502)
    assert sum(prompt in str(b["messages"]) for b in upstream.log.chat_bodies) == 2


def test_openai_client_sees_typed_errors(gateway: RunningGateway) -> None:
    client = client_for(gateway)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": unique_prompt("[[status:429]]")}],
        )
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": unique_prompt("[[status:500]]")}],
        )
    assert caught.value.status_code == 502


def test_unknown_route_and_method_use_the_envelope(gateway: RunningGateway) -> None:
    _assert_envelope(httpx.get(f"{gateway.url}/v1/nope"), 404)
    _assert_envelope(httpx.get(f"{gateway.base_url}/chat/completions"), 405)


def test_client_request_id_is_echoed(gateway: RunningGateway) -> None:
    response = _post(gateway, _chat(unique_prompt()), headers={"x-request-id": "trace-abc.123"})
    assert response.headers["x-request-id"] == "trace-abc.123"
    unsafe = _post(gateway, _chat(unique_prompt()), headers={"x-request-id": "bad id\twith tab"})
    assert unsafe.headers["x-request-id"].startswith("req_")
