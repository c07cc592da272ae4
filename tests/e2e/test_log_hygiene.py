"""The real `gateway serve` process, at debug level, writes JSON log lines that carry
request ids and never an API key, an Authorization header, an upstream key, or prompt
and answer text, whatever happens: hits, misses, upstream errors, bad keys, refused
memories."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
import yaml

from tests.e2e.helpers import GatewayProcess
from tests.helpers import ADMIN_KEY, TENANT_KEYS, FakeUpstream, gateway_config_dict

PROMPT_MARKER = "zebracorn"  # a word that must never reach a log line
UPSTREAM_KEY = "sk-upstream-secret-123456"


def test_logs_are_json_with_request_ids_and_no_secrets_or_text(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    config = gateway_config_dict(upstream.url, tmp_path / "data")
    config["server"] = {"log_level": "debug"}
    config_path = tmp_path / "gateway.yaml"
    config_path.write_text(yaml.safe_dump(config))
    log_path = tmp_path / "gateway.log"
    gateway = GatewayProcess(config_path, log_path)
    base = gateway.url
    key = TENANT_KEYS["acme"]
    request_ids: list[str] = []
    try:
        auth = {"authorization": f"Bearer {key}"}
        for text in (
            f"Tell me about the {PROMPT_MARKER} please",
            f"Tell me about the {PROMPT_MARKER} please",  # exact hit
            f"Why is the {PROMPT_MARKER} striped? [[status:500]]",  # upstream error
            f"Cancel my {PROMPT_MARKER} order",  # bypass
        ):
            response = httpx.post(
                f"{base}/v1/chat/completions",
                headers=auth,
                json={"model": "fake-model", "messages": [{"role": "user", "content": text}]},
                timeout=30,
            )
            request_ids.append(response.headers["x-request-id"])
        bad = httpx.post(
            f"{base}/v1/chat/completions",
            headers={"authorization": "Bearer sk-wrong-key-0123456789"},
            json={"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]},
            timeout=10,
        )
        assert bad.status_code == 401
        refused = httpx.post(
            f"{base}/v1/memories",
            headers=auth,
            json={"user": "u1", "content": f"{PROMPT_MARKER} password: hunter2hunter2"},
            timeout=10,
        )
        assert refused.status_code == 422
        httpx.get(f"{base}/metrics", headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=10)
    finally:
        gateway.process.terminate()
        gateway.process.wait(timeout=30)

    text = log_path.read_text()
    for secret in (key, ADMIN_KEY, UPSTREAM_KEY, "sk-wrong-key-0123456789", "hunter2hunter2"):
        assert secret not in text, f"a secret reached the log: {secret[:6]}..."
    assert PROMPT_MARKER not in text, "prompt text reached the log"
    assert "Answer #" not in text, "answer text reached the log"
    lines = [line for line in text.splitlines() if line.strip()]
    records = [orjson.loads(line) for line in lines]  # every line is JSON
    decisions = [r for r in records if r.get("logger") == "gateway.decisions"]
    logged_ids = {r["request_id"] for r in decisions}
    assert set(request_ids) <= logged_ids
    for record in decisions:
        assert record["event"]["request_id"] == record["request_id"]
