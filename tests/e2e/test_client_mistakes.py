"""Client mistakes are 4xx, found before any upstream call, and cost the deployments
nothing: a content part that is not valid per OpenAI's schema is a 400 in the envelope
(it was a 502 after the router's retries, and counted against a healthy deployment);
a client that goes away in the middle of its body leaves no ERROR line in the log."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml

from tests.e2e.helpers import GatewayProcess, client_for, unique_prompt
from tests.helpers import TENANT_KEYS, FakeUpstream, GatewayFactory, gateway_config_dict

CHAT = "/v1/chat/completions"

# Parts that OpenAI's schema refuses (and litellm fails on, or passes on to fail there).
MALFORMED_PARTS: list[tuple[str, dict[str, Any]]] = [
    ("image_url without image_url", {"type": "image_url"}),
    ("image_url without url", {"type": "image_url", "image_url": {"detail": "low"}}),
    ("image_url with a null url", {"type": "image_url", "image_url": {"url": None}}),
    ("image_url url not a string", {"type": "image_url", "image_url": {"url": 5}}),
    ("image_url as a number", {"type": "image_url", "image_url": 5}),
    ("input_audio without input_audio", {"type": "input_audio"}),
    ("input_audio without data", {"type": "input_audio", "input_audio": {"format": "wav"}}),
    ("input_audio without format", {"type": "input_audio", "input_audio": {"data": "AAAA"}}),
    ("file without file", {"type": "file"}),
    ("file with neither id nor data", {"type": "file", "file": {"filename": "a.pdf"}}),
    ("file id not a string", {"type": "file", "file": {"file_id": 5}}),
]


def _chat(content: Any) -> dict[str, Any]:
    return {"model": "fake-model", "messages": [{"role": "user", "content": content}]}


def test_malformed_parts_are_400_before_any_upstream_call_and_cool_nothing_down(
    start_gateway: GatewayFactory, upstream: FakeUpstream
) -> None:
    # Retries and a cooldown after one failure, as a production router would have them:
    # a malformed part counted as a deployment failure would take the model away.
    gateway = start_gateway(
        router_settings={
            "num_retries": 2,
            "retry_after_seconds": 0,
            "timeout_seconds": 5.0,
            "cooldown_seconds": 60,
        }
    )
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    calls_before = len(upstream.log.chat_bodies)
    failures = []
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        for name, part in MALFORMED_PARTS:
            prompt = unique_prompt("Describe this.")
            response = client.post(
                CHAT, headers=headers, json=_chat([{"type": "text", "text": prompt}, part])
            )
            if response.status_code != 400:
                failures.append(f"{name}: {response.status_code} {response.text[:200]}")
                continue
            error = response.json()["error"]
            if set(error) != {"message", "type", "param", "code"}:
                failures.append(f"{name}: not the envelope: {error}")
            elif error["type"] != "invalid_request_error" or error["param"] != "messages.0.content":
                failures.append(f"{name}: {error}")
    assert not failures, "\n".join(failures)
    assert len(upstream.log.chat_bodies) == calls_before, "a malformed part reached upstream"
    # The deployment is not cooled down: the next good request is answered by it.
    answer = client_for(gateway).chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": unique_prompt("Hello?")}]
    )
    assert answer.choices[0].message.content


def test_well_formed_parts_are_still_answered(start_gateway: GatewayFactory) -> None:
    gateway = start_gateway()
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    parts = [
        {"type": "image_url", "image_url": {"url": "data:,", "detail": "low"}},
        {"type": "image_url", "image_url": "data:,"},  # litellm's shorthand
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
        {"type": "file", "file": {"file_id": "file-abc"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,AAAA"}},
    ]
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        for part in parts:
            prompt = unique_prompt("Describe this.")
            response = client.post(
                CHAT, headers=headers, json=_chat([{"type": "text", "text": prompt}, part])
            )
            assert response.status_code == 200, (part, response.text[:300])


def _disconnect_mid_body(port: int, path: str) -> None:
    body = json.dumps(_chat("Tell me a story about a lighthouse keeper.")).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        f"authorization: Bearer {TENANT_KEYS['acme']}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body) + 1000}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + body[: len(body) // 2])
        time.sleep(0.3)  # the gateway is reading the body by now


@pytest.mark.parametrize("storage_backend", ["embedded"])
def test_a_client_that_leaves_mid_body_logs_no_error(
    upstream: FakeUpstream, tmp_path: Path, storage_backend: str
) -> None:
    config = gateway_config_dict(upstream.url, tmp_path / "data")
    config_path = tmp_path / "gateway.yaml"
    config_path.write_text(yaml.safe_dump(config))
    log_path = tmp_path / "gateway.log"
    gateway = GatewayProcess(config_path, log_path)
    try:
        for path in (CHAT, "/v1/embeddings", "/v1/memories"):
            _disconnect_mid_body(gateway.port, path)
        # Still serving, and the log has caught up with the three requests.
        response = httpx.get(f"{gateway.url}/healthz", timeout=10)
        assert response.status_code == 200
        time.sleep(0.5)
    finally:
        gateway.stop()
    records = [orjson.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    errors = [r for r in records if r.get("level") in ("ERROR", "CRITICAL", "error")]
    assert not errors, errors
