"""The exact-hit shortcut (gateway/api/hit_shortcut.py) over HTTP on both backends: a
body already answered with a plain exact hit is answered again in front of FastAPI,
indistinguishable from the full path's hit; everything it does not handle falls
through; keys, rate limits and policy reloads are honoured on it."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.helpers import gateway_with_policies, unique_prompt, upstream_calls
from tests.helpers import ADMIN_KEY, TENANT_KEYS, FakeUpstream, GatewayFactory, RunningGateway

# Differ between any two responses: the request id, the date, the answer's age.
_PER_RESPONSE_HEADERS = {"x-request-id", "date", "age"}


def _post(
    gateway: RunningGateway, body: dict[str, Any], key: str | None = None, **headers: str
) -> httpx.Response:
    return httpx.post(
        f"{gateway.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {key or TENANT_KEYS['acme']}", **headers},
        json=body,
        timeout=30,
    )


def _body(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"model": "fake-model", "messages": [{"role": "user", "content": prompt}], **extra}


def _metrics(gateway: RunningGateway) -> str:
    return httpx.get(
        f"{gateway.url}/metrics", headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=30
    ).text


def _shortcut_hits(gateway: RunningGateway) -> float:
    found = re.search(r"^gateway_exact_hit_shortcut_total (\S+)$", _metrics(gateway), re.M)
    return float(found.group(1)) if found else 0.0


def _exact_requests(gateway: RunningGateway) -> float:
    found = re.findall(
        r'^gateway_requests_total\{[^}]*layer="exact"[^}]*\} (\S+)$', _metrics(gateway), re.M
    )
    return sum(float(v) for v in found)


def _comparable(response: httpx.Response) -> tuple[int, dict[str, str], dict[str, Any]]:
    headers = {k: v for k, v in response.headers.items() if k not in _PER_RESPONSE_HEADERS}
    body = response.json()
    for varying in ("id", "created"):
        body.pop(varying)
    return response.status_code, headers, body


def _primed(gateway: RunningGateway, body: dict[str, Any]) -> httpx.Response:
    """A miss, then the full path's exact hit (which the shortcut learns from)."""
    assert _post(gateway, body).headers["x-gateway-cache"] == "miss"
    full = _post(gateway, body)
    assert full.headers["x-gateway-cache"] == "exact"
    return full


def _check_a_shortcut_hit_is_the_full_path_hit_byte_for_byte(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt("What is the capital of Peru?")
    body = _body(prompt, temperature=0)
    full = _primed(gateway, body)
    before, exact_before = _shortcut_hits(gateway), _exact_requests(gateway)

    short = _post(gateway, body)

    assert _shortcut_hits(gateway) == before + 1
    assert _comparable(short) == _comparable(full)
    assert short.headers["x-request-id"] != full.headers["x-request-id"]
    assert short.json()["id"] != full.json()["id"]
    # Counted like any exact hit; the provider was asked once, by the first request.
    assert _exact_requests(gateway) == exact_before + 1
    assert upstream_calls(upstream, prompt) == 1
    # A client-supplied request id is echoed as on the full path.
    echoed = _post(gateway, body, **{"x-request-id": "client-id-42"})
    assert echoed.headers["x-request-id"] == "client-id-42"
    assert _shortcut_hits(gateway) == before + 2


def _check_what_the_shortcut_does_not_handle_takes_the_full_path(gateway: RunningGateway) -> None:
    prompt = unique_prompt("Explain photosynthesis simply")
    body = _body(prompt)
    _primed(gateway, body)
    before = _shortcut_hits(gateway)

    streamed = _post(gateway, _body(prompt, stream=True))
    assert streamed.headers["x-gateway-cache"] == "exact"
    assert streamed.headers["content-type"].startswith("text/event-stream")
    fresh_only = _post(gateway, body, **{"cache-control": "no-cache"})
    assert fresh_only.headers["x-gateway-cache"] == "miss"
    assert fresh_only.headers["x-gateway-cache-reason"] == "client_no_cache"
    too_old = _post(gateway, body, **{"cache-control": "max-age=0"})
    assert too_old.headers["x-gateway-cache"] == "miss"
    bad_ttl = _post(gateway, body, **{"x-gateway-cache-ttl": "soon"})
    assert bad_ttl.status_code == 400
    assert bad_ttl.json()["error"]["code"] == "invalid_cache_ttl"
    user = _post(gateway, body, **{"x-gateway-user": "alice"})
    assert user.status_code == 200  # the memory stage runs first (full path)
    wrong_key = _post(gateway, body, key="sk-not-a-key")
    assert wrong_key.status_code == 401
    assert set(wrong_key.json()["error"]) == {"message", "type", "param", "code"}
    other_tenant = _post(gateway, body, key=TENANT_KEYS["globex"])
    assert other_tenant.headers["x-gateway-cache"] == "miss"

    assert _shortcut_hits(gateway) == before
    # The body it knows still takes it.
    assert _post(gateway, body).headers["x-gateway-cache"] == "exact"
    assert _shortcut_hits(gateway) == before + 1


def test_shortcut_hits_match_the_full_path_fall_through_and_honour_revocation(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    # Three independent checks (each its own prompts) on one gateway per backend: a
    # gateway start is most of what each would cost alone.
    _check_a_shortcut_hit_is_the_full_path_hit_byte_for_byte(gateway, upstream)
    _check_what_the_shortcut_does_not_handle_takes_the_full_path(gateway)
    _check_a_revoked_key_is_refused_on_the_shortcut(gateway)


def test_shortcut_charges_the_request_limit_and_answers_429_past_it(
    start_gateway: GatewayFactory, tmp_path: Path, upstream: FakeUpstream
) -> None:
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"tenant.acme.yaml": "rate_limits:\n  tenant: {rpm: 1, request_burst: 4}\n"},
    )
    body = _body(unique_prompt("Explain tides in one line"))
    _primed(gateway, body)  # two requests charged
    before = _shortcut_hits(gateway)
    assert _post(gateway, body).status_code == 200  # the third, by the shortcut
    assert _shortcut_hits(gateway) == before + 1
    assert _post(gateway, body).status_code == 200  # the fourth
    refused = _post(gateway, body)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert "retry-after" in refused.headers
    assert _shortcut_hits(gateway) == before + 2


def _check_a_revoked_key_is_refused_on_the_shortcut(gateway: RunningGateway) -> None:
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}
    created = httpx.post(
        f"{gateway.url}/admin/keys", headers=admin, json={"tenant": "acme"}, timeout=30
    ).json()
    body = _body(unique_prompt("What is the boiling point of water?"))
    assert _post(gateway, body, key=created["key"]).headers["x-gateway-cache"] == "miss"
    assert _post(gateway, body, key=created["key"]).headers["x-gateway-cache"] == "exact"
    before = _shortcut_hits(gateway)
    assert _post(gateway, body, key=created["key"]).headers["x-gateway-cache"] == "exact"
    assert _shortcut_hits(gateway) == before + 1

    revoked = httpx.delete(f"{gateway.url}/admin/keys/{created['id']}", headers=admin, timeout=30)
    assert revoked.status_code == 200
    refused = _post(gateway, body, key=created["key"])
    assert refused.status_code == 401
    assert _shortcut_hits(gateway) == before + 1


def test_policy_reload_that_changes_keys_is_honoured(
    start_gateway: GatewayFactory, tmp_path: Path, upstream: FakeUpstream
) -> None:
    gateway, policies = gateway_with_policies(
        start_gateway, tmp_path, {"default.yaml": 'version: "1"\n'}, policy_reload_seconds=0.1
    )
    prompt = unique_prompt("Name a prime number above 100")
    body = _body(prompt)
    _primed(gateway, body)
    before = _shortcut_hits(gateway)
    assert _post(gateway, body).headers["x-gateway-cache"] == "exact"
    assert _shortcut_hits(gateway) == before + 1

    # A new policy version is part of the key: the old entry no longer answers.
    (policies / "default.yaml").write_text('version: "2"\n')
    deadline = time.monotonic() + 10
    while True:
        answer = _post(gateway, body)
        if answer.headers["x-gateway-cache"] == "miss" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert answer.headers["x-gateway-cache"] == "miss"
    assert upstream_calls(upstream, prompt) == 2


_SENTENCE = "Explain in plain words how plants turn sunlight, water and air into sugar."


def _settle() -> None:
    """Token corrections run after the response; give them a moment on this busy box
    (0.3 s was once too short for Redis with the whole suite running)."""
    time.sleep(1.0)


def test_a_shortcut_hit_is_not_refused_for_tokens_it_does_not_spend(
    start_gateway: GatewayFactory, tmp_path: Path, upstream: FakeUpstream
) -> None:
    # 100 tokens, refilling too slowly to matter; each prompt is estimated at ~65 and
    # corrected to the 17 the fake upstream reports.
    gateway, _ = gateway_with_policies(
        start_gateway,
        tmp_path,
        {"tenant.acme.yaml": "rate_limits:\n  tenant: {tpm: 6, token_burst: 100}\n"},
    )
    known = _body(unique_prompt(" ".join([_SENTENCE] * 3)))
    _primed(gateway, known)
    _settle()
    for _ in range(2):  # two more answers leave ~49 tokens: under one more estimate
        other = _post(gateway, _body(unique_prompt(" ".join([_SENTENCE] * 3))))
        assert other.status_code == 200 and other.headers["x-gateway-cache"] == "miss"
        _settle()
    before = _shortcut_hits(gateway)

    hit = _post(gateway, known)

    assert hit.status_code == 200 and hit.headers["x-gateway-cache"] == "exact"
    assert _shortcut_hits(gateway) == before + 1
    # A miss still needs its estimate: refused before the provider call.
    refused_prompt = unique_prompt(" ".join([_SENTENCE] * 3))
    refused = _post(gateway, _body(refused_prompt))
    assert refused.status_code == 429
    assert refused.json()["error"]["type"] == "tokens"
    assert upstream_calls(upstream, refused_prompt) == 0
