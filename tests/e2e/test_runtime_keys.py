"""Keys issued at run time over HTTP, on both backends: create, use with the official
openai client, list without the secret, revoke, rotate, expiry, allowed models, user
binding; every admin action in the audit trail, no secret in it or in the log."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from tests.e2e.helpers import unique_prompt
from tests.helpers import ADMIN_KEY, TENANT_KEYS, RunningGateway


def _admin(gateway: RunningGateway, method: str, path: str, **kw: Any) -> httpx.Response:
    return httpx.request(
        method,
        f"{gateway.url}{path}",
        headers={"authorization": f"Bearer {ADMIN_KEY}"},
        timeout=30,
        **kw,
    )


def _create(gateway: RunningGateway, **body: Any) -> dict[str, Any]:
    response = _admin(gateway, "POST", "/admin/keys", json={"tenant": "acme", **body})
    assert response.status_code == 201, response.text
    return dict(response.json())


def _client(gateway: RunningGateway, key: str) -> OpenAI:
    return OpenAI(base_url=gateway.base_url, api_key=key, max_retries=0)


def _ask(gateway: RunningGateway, key: str, **extra: Any) -> str:
    completion = _client(gateway, key).chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": unique_prompt("Name a river in Europe")}],
        **extra,
    )
    return str(completion.choices[0].message.content)


def _status(gateway: RunningGateway, key: str) -> int:
    response = httpx.get(
        f"{gateway.url}/v1/models", headers={"authorization": f"Bearer {key}"}, timeout=30
    )
    return response.status_code


def _audit(gateway: RunningGateway, **params: Any) -> list[dict[str, Any]]:
    response = _admin(gateway, "GET", "/admin/audit", params=params)
    assert response.status_code == 200, response.text
    return list(response.json()["data"])


def test_create_use_list_revoke_and_audit(
    gateway: RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    created = _create(gateway, label="ci runner")
    secret = created["key"]
    assert secret.startswith("sk-gw-") and len(secret) > 40
    assert _ask(gateway, secret)

    listed = _admin(gateway, "GET", "/admin/keys", params={"tenant": "acme"}).json()["data"]
    row = next(item for item in listed if item["id"] == created["id"])
    assert row["label"] == "ci runner" and row["tenant"] == "acme"
    assert row["prefix"] == secret[:10] + "…"
    assert row["revoked_at"] is None
    assert secret not in json.dumps(listed) and "digest" not in json.dumps(listed)

    revoked = _admin(gateway, "DELETE", f"/admin/keys/{created['id']}")
    assert revoked.status_code == 200 and revoked.json()["revoked"] is True
    with pytest.raises(openai.AuthenticationError):
        _ask(gateway, secret)
    assert _admin(gateway, "DELETE", "/admin/keys/key_nope").status_code == 404

    entries = _audit(gateway)
    actions = [(entry["action"], entry["outcome"]) for entry in entries]
    # Newest first.
    assert actions[:3] == [("key.revoke", "not_found"), ("key.revoke", "ok"), ("key.create", "ok")]
    create_entry = entries[2]
    assert create_entry["target"] == created["id"] and create_entry["tenant"] == "acme"
    assert create_entry["actor"].startswith("sha256:") and create_entry["client"]
    assert [e["action"] for e in _audit(gateway, action="key.create")] == ["key.create"]
    assert secret not in json.dumps(entries)
    assert ADMIN_KEY not in json.dumps(entries)
    assert "key.create" in caplog.text
    assert secret not in caplog.text and ADMIN_KEY not in caplog.text


def test_rotate_stops_the_old_secret_and_the_new_one_works(gateway: RunningGateway) -> None:
    created = _create(gateway)
    rotated = _admin(gateway, "POST", f"/admin/keys/{created['id']}/rotate")
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()
    assert new["key"] != created["key"] and new["rotated_from"] == created["id"]
    assert _status(gateway, created["key"]) == 401
    assert _ask(gateway, new["key"])
    again = _admin(gateway, "POST", f"/admin/keys/{created['id']}/rotate")
    assert again.status_code == 409
    assert [e["action"] for e in _audit(gateway, action="key.rotate")] == [
        "key.rotate",
        "key.rotate",
    ]
    assert created["key"] not in json.dumps(_audit(gateway))
    assert new["key"] not in json.dumps(_audit(gateway))


def test_rotation_grace_keeps_the_old_secret_for_a_while(gateway: RunningGateway) -> None:
    created = _create(gateway)
    rotated = _admin(
        gateway, "POST", f"/admin/keys/{created['id']}/rotate", json={"grace_seconds": 600}
    )
    assert rotated.status_code == 200
    assert _status(gateway, created["key"]) == 200
    assert _status(gateway, rotated.json()["key"]) == 200


def test_expired_key_is_refused(gateway: RunningGateway) -> None:
    created = _create(gateway, ttl_seconds=1)
    deadline = time.monotonic() + 10
    while _status(gateway, created["key"]) == 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    response = httpx.get(
        f"{gateway.url}/v1/models",
        headers={"authorization": f"Bearer {created['key']}"},
        timeout=30,
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "expired_api_key"
    past = _create(gateway, expires_at="2001-01-01T00:00:00Z")
    assert _status(gateway, past["key"]) == 401


def test_allowed_models_are_enforced(gateway: RunningGateway) -> None:
    created = _create(gateway, allowed_models=["fake-embedder"])
    with pytest.raises(openai.PermissionDeniedError) as refused:
        _ask(gateway, created["key"])
    assert refused.value.body["code"] == "model_not_allowed"  # type: ignore[index]
    listed = _client(gateway, created["key"]).models.list()
    assert [model.id for model in listed.data] == ["fake-embedder"]
    embedded = _client(gateway, created["key"]).embeddings.create(
        model="fake-embedder", input="hello"
    )
    assert embedded.data
    unknown = _admin(
        gateway, "POST", "/admin/keys", json={"tenant": "acme", "allowed_models": ["gpt-9"]}
    )
    assert unknown.status_code == 400 and unknown.json()["error"]["param"] == "allowed_models"


def test_a_user_bound_key_speaks_for_its_user_only(gateway: RunningGateway) -> None:
    created = _create(gateway, user="u-alice")
    key = created["key"]
    with pytest.raises(openai.PermissionDeniedError) as refused:
        _ask(gateway, key, extra_headers={"x-gateway-user": "u-bob"})
    assert refused.value.body["code"] == "user_not_allowed"  # type: ignore[index]
    with pytest.raises(openai.PermissionDeniedError):
        _ask(gateway, key, user="u-bob")
    assert _ask(gateway, key, user="u-alice")
    # Its memory scope is its user: written with no user named, read back as u-alice's.
    headers = {"authorization": f"Bearer {key}"}
    written = httpx.post(
        f"{gateway.url}/v1/memories",
        headers=headers,
        json={"items": [{"content": "Prefers window seats on long flights."}]},
        timeout=30,
    )
    assert written.status_code == 201, written.text
    mine = httpx.get(f"{gateway.url}/v1/memories", headers=headers, timeout=30).json()["data"]
    assert [item["user"] for item in mine] == ["u-alice"]
    others = httpx.get(
        f"{gateway.url}/v1/memories", headers=headers, params={"user": "u-bob"}, timeout=30
    )
    assert others.status_code == 403


def test_yaml_keys_still_work_and_tenant_keys_cannot_issue_keys(gateway: RunningGateway) -> None:
    assert _status(gateway, TENANT_KEYS["acme"]) == 200
    refused = httpx.post(
        f"{gateway.url}/admin/keys",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"tenant": "acme"},
        timeout=30,
    )
    assert refused.status_code == 403
    assert _status(gateway, "sk-gw-not-a-real-key-at-all") == 401
    bad = _admin(gateway, "POST", "/admin/keys", json={"tenant": "admin"})
    assert bad.status_code == 400 and "error" in bad.json()


def test_purge_and_policy_reload_are_audited(gateway: RunningGateway) -> None:
    assert _admin(gateway, "POST", "/admin/cache/purge", json={"tenant": "acme"}).status_code == 200
    assert _admin(gateway, "POST", "/admin/policies/reload").status_code == 200
    entries = _audit(gateway, limit=2)
    assert [entry["action"] for entry in entries] == ["policies.reload", "cache.purge"]
    assert entries[1]["tenant"] == "acme" and entries[1]["details"]["filters"] == ["tenant"]
