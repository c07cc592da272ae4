"""`gateway cache import`: recorded pairs stored through the live rules, then served as
exact hits by a gateway on the same storage; the refused ones never are."""

from __future__ import annotations

import io
import uuid
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from gateway.cli import main
from gateway.components import ComponentsFactory
from gateway.memory.inject import MEMORY_HEADER
from gateway.settings import parse_config
from gateway.testing.threaded_server import free_port
from gateway.warmup.command import import_options, run_import
from tests.e2e.helpers import client_for, unique_prompt, upstream_calls
from tests.helpers import (
    ADMIN_KEY,
    FakeUpstream,
    GatewayFactory,
    RunningGateway,
    gateway_config_dict,
)


def _user(prompt: str) -> dict[str, str]:
    return {"role": "user", "content": prompt}


def _request(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"model": "fake-model", "messages": [_user(prompt)], **extra}


def _completion(text: str, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-recorded",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "fake-model-2024-01-01",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42},
    }


def _chunks(text: str) -> list[dict[str, Any]]:
    base = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        *(
            {**base, "choices": [{"index": 0, "delta": {"content": piece}}]}
            for piece in text.partition(" ")
        ),
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]


class History:
    """The prompts of one import file, each unique to the test."""

    def __init__(self) -> None:
        self.cacheable = unique_prompt("What is the capital of France?")
        self.batch = unique_prompt("How many legs does a spider have?")
        self.streamed = unique_prompt("Which planet is the largest in the solar system?")
        self.write = unique_prompt("Delete every file in the shared drive.")
        self.time = "What is the weather in Lima today?"
        self.failed = unique_prompt("Who painted the Mona Lisa?")
        self.cut_off = unique_prompt("Explain how tides work.")
        self.user_scoped = unique_prompt("What is the boiling point of water at sea level?")
        self.steered = unique_prompt("What is the tallest mountain on Earth?")
        self.with_memory = unique_prompt("Suggest a simple dinner recipe.")
        # A system prompt of this test's own: its semantic entries meet no other test's.
        self.system = {"role": "system", "content": unique_prompt("You are a concise tutor.")}
        self.sort = "How do I sort a list in Python?"

    def lines(self) -> list[bytes]:
        records: list[dict[str, Any] | None] = [
            {"request": _request(self.cacheable), "response": _completion("Paris (recorded).")},
            # the same request again: stored once, the first answer kept
            {"request": _request(self.cacheable), "response": _completion("Paris, again.")},
            {
                "custom_id": "r1",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": _request(self.batch),
                "response": {
                    "status_code": 200,
                    "request_id": "req_1",
                    "body": _completion("Eight (recorded)."),
                },
                "error": None,
            },
            {"request": _request(self.streamed, stream=True), "response": _chunks("Jupiter is.")},
            {"request": _request(self.write), "response": _completion("Done.")},
            {"request": _request(self.time), "response": _completion("Sunny.")},
            {
                "request": _request(self.failed),
                "response": {"error": {"message": "rate limited", "type": "rate_limit_error"}},
                "status_code": 429,
            },
            {
                "request": _request(self.cut_off),
                "response": _completion("Tides are caused by", finish_reason="length"),
            },
            {
                "request": _request(self.user_scoped, user="alice"),
                "response": _completion("100 degrees Celsius."),
            },
            {
                "request": {**_request(self.cacheable), "model": "no-such-model"},
                "response": _completion("Paris."),
            },
            {
                "request": {**_request(self.sort), "messages": [self.system, _user(self.sort)]},
                "response": _completion("Use sorted() (recorded)."),
            },
            # a litellm setting in the body: the gateway refuses that request (400)
            {
                "request": _request(self.steered, api_base="http://elsewhere.invalid"),
                "response": _completion("Everest."),
            },
            {
                # a log taken after the gateway injected this user's memories
                "request": {
                    **_request(self.with_memory),
                    "messages": [
                        {
                            "role": "system",
                            "content": MEMORY_HEADER + "\n- [user, 2026-01-01] vegan",
                        },
                        _user(self.with_memory),
                    ],
                },
                "response": _completion("A lentil curry."),
            },
            None,  # a line that is not JSON
        ]
        return [
            b'{"request": {"model": "fake-model", "messages": [' if r is None else orjson.dumps(r)
            for r in records
        ]


@pytest.fixture
def storage_overrides(
    storage_backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> dict[str, Any]:
    """One storage for the import and the gateway started after it."""
    data_dir = tmp_path / "data"
    if storage_backend == "redis":
        redis = request.getfixturevalue("redis_server")
        return {
            "storage": {
                "backend": "redis",
                "redis_url": redis.url,
                "redis_prefix": f"t{uuid.uuid4().hex[:12]}",
                "path": str(data_dir),
            }
        }
    return {"storage": {"backend": "embedded", "path": str(data_dir)}}


def _import(
    upstream: FakeUpstream,
    tmp_path: Path,
    components_factory: ComponentsFactory,
    storage_overrides: dict[str, Any],
    file: Path,
) -> tuple[int, dict[str, Any], str]:
    config, _ = parse_config(
        gateway_config_dict(upstream.url, tmp_path / "data", **storage_overrides)
    )
    output = tmp_path / f"summary-{uuid.uuid4().hex[:6]}.json"
    stdout, stderr = io.StringIO(), io.StringIO()
    status = run_import(
        config,
        file,
        import_options(config, file, tenant="acme"),
        output=output,
        show_progress=True,
        stdout=stdout,
        stderr=stderr,
        components_factory=components_factory,
    )
    return status, orjson.loads(output.read_bytes()), stdout.getvalue()


def _ask(
    gateway: RunningGateway, prompt: str, tenant: str = "acme", **extra: Any
) -> tuple[Any, Any]:
    raw = client_for(gateway, tenant).chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": prompt}], **extra
    )
    return raw.headers, raw.parse()


def test_import_stores_cacheable_records_and_refuses_the_rest_with_reasons(
    upstream: FakeUpstream,
    tmp_path: Path,
    components_factory: ComponentsFactory,
    storage_overrides: dict[str, Any],
    start_gateway: GatewayFactory,
) -> None:
    history = History()
    file = tmp_path / "history.jsonl"
    file.write_bytes(b"\n".join(history.lines()) + b"\n\n")

    status, summary, text = _import(upstream, tmp_path, components_factory, storage_overrides, file)

    assert status == 0
    assert summary["records"] == 14  # the blank line is not a record
    assert summary["stored"] == 4
    assert summary["refused"] == {
        "invalid_request": 1,
        "memory_personalized": 1,
        "duplicate": 1,
        "write_intent": 1,
        "time_sensitive": 1,
        "error": 1,
        "finish_reason": 1,
        "user_scoped": 1,
        "unknown_model": 1,
        "invalid_json": 1,
    }
    assert summary["example_lines"]["duplicate"] == [2]
    assert summary["example_lines"]["invalid_json"] == [14]
    assert "stored   4" in text and "write_intent" in text
    # No prompt text in the summary: reasons and line numbers only.
    assert "France" not in text and "France" not in orjson.dumps(summary).decode()

    gateway = start_gateway(**storage_overrides)
    for prompt, answer in (
        (history.cacheable, "Paris (recorded)."),
        (history.batch, "Eight (recorded)."),
        (history.streamed, "Jupiter is."),
    ):
        headers, completion = _ask(gateway, prompt)
        assert headers["x-gateway-cache"] == "exact", prompt
        assert completion.choices[0].message.content == answer
        assert headers["x-gateway-tokens-saved"] == ("42" if prompt != history.streamed else "0")
        assert upstream_calls(upstream, prompt) == 0
    # The semantic layer has it too: a paraphrase gets the recorded answer.
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[history.system, _user("How can I sort a list in Python?")],
    )
    assert raw.headers["x-gateway-cache"] == "semantic"
    assert raw.parse().choices[0].message.content == "Use sorted() (recorded)."
    # Stored for the tenant it was imported for only.
    headers, _ = _ask(gateway, history.cacheable, tenant="globex")
    assert headers["x-gateway-cache"] == "miss"

    headers, _ = _ask(gateway, history.write)
    assert (headers["x-gateway-cache"], headers["x-gateway-cache-reason"]) == (
        "bypass",
        "write_intent",
    )
    for prompt in (history.failed, history.cut_off):
        headers, completion = _ask(gateway, prompt)
        assert headers["x-gateway-cache"] == "miss", prompt
        assert completion.choices[0].message.content.startswith("Answer #")  # the upstream's
    headers, _ = _ask(gateway, history.user_scoped, user="alice")
    assert headers["x-gateway-cache"] != "exact"


def test_importing_again_finds_every_record_already_cached(
    upstream: FakeUpstream,
    tmp_path: Path,
    components_factory: ComponentsFactory,
    storage_overrides: dict[str, Any],
) -> None:
    history = History()
    file = tmp_path / "history.jsonl"
    file.write_bytes(b"\n".join(history.lines()))
    _import(upstream, tmp_path, components_factory, storage_overrides, file)

    status, summary, _ = _import(upstream, tmp_path, components_factory, storage_overrides, file)

    assert status == 0
    assert summary["stored"] == 0
    assert summary["refused"]["duplicate"] == 5  # the four stored and the in-file repeat


def test_cache_import_command_checks_the_tenant_before_loading_anything(
    upstream: FakeUpstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "gateway.yaml"
    config.write_bytes(orjson.dumps(gateway_config_dict(upstream.url, tmp_path / "data")))
    file = tmp_path / "history.jsonl"
    file.write_bytes(b"")

    assert main(["cache", "import", str(file), "--config", str(config)]) == 2
    assert "--tenant is required" in capsys.readouterr().err
    assert main(["cache", "import", str(file), "--config", str(config), "--tenant", "nope"]) == 2
    assert "unknown tenant 'nope'" in capsys.readouterr().err
    missing = tmp_path / "missing.jsonl"
    assert main(["cache", "import", str(missing), "--config", str(config), "--tenant", "acme"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_an_unreachable_store_imports_nothing_and_exits_1(
    upstream: FakeUpstream, tmp_path: Path, components_factory: ComponentsFactory
) -> None:
    file = tmp_path / "history.jsonl"
    file.write_bytes(b"\n".join(History().lines()))
    storage = {
        "backend": "redis",
        "redis_url": f"redis://127.0.0.1:{free_port()}/0",  # nothing listens there
        "redis_timeout_seconds": 0.5,
        "redis_connect_timeout_seconds": 0.5,
        "path": str(tmp_path / "data"),
    }
    config, _ = parse_config(gateway_config_dict(upstream.url, tmp_path / "data", storage=storage))
    stdout, stderr = io.StringIO(), io.StringIO()
    status = run_import(
        config,
        file,
        import_options(config, file, tenant="acme"),
        stdout=stdout,
        stderr=stderr,
        components_factory=components_factory,
    )
    assert status == 1
    assert "the redis storage is unavailable; nothing imported" in stderr.getvalue()
    assert stdout.getvalue() == ""


def _seed_lines(system: dict[str, str]) -> list[bytes]:
    """Paraphrase pairs and a near miss, each with its recorded answer."""

    def record(prompt: str, answer: str) -> bytes:
        request = {"model": "fake-model", "messages": [system, _user(prompt)]}
        return orjson.dumps({"request": request, "response": _completion(answer)})

    egg, plane = "Boil the egg for nine minutes.", "Fold the sheet, then the wings down."
    return [
        record("How long should I boil an egg?", egg),
        # calibrated 0.93 and 0.90 to the records above: in [floor, threshold), and they
        # pass every check; the same recorded answer: the local judge says "same"
        record("How many minutes should I boil an egg?", egg),
        record("How do I make a paper airplane?", plane),
        record("How do you make a paper aeroplane?", plane),
        record("How many minutes does it take to walk 2 miles?", "About 40 minutes."),
        # another number: known to be different; its answer differs, and the judge says so
        record("How many minutes does it take to walk 3 miles?", "About 60 minutes."),
    ]


def test_import_with_seed_adaptive_adds_the_verdicts_of_near_pairs(
    upstream: FakeUpstream,
    tmp_path: Path,
    components_factory: ComponentsFactory,
    storage_overrides: dict[str, Any],
    start_gateway: GatewayFactory,
) -> None:
    system = {"role": "system", "content": unique_prompt("You answer in one sentence.")}
    file = tmp_path / "near.jsonl"
    file.write_bytes(b"\n".join(_seed_lines(system)))
    config, _ = parse_config(
        gateway_config_dict(upstream.url, tmp_path / "data", **storage_overrides)
    )
    output = tmp_path / "summary.json"
    stdout = io.StringIO()
    status = run_import(
        config,
        file,
        import_options(config, file, tenant="acme", seed_adaptive=True),
        output=output,
        stdout=stdout,
        stderr=io.StringIO(),
        components_factory=components_factory,
    )
    summary = orjson.loads(output.read_bytes())
    assert status == 0 and summary["stored"] == 6
    assert summary["seeded"] == {
        "verdicts": 2,
        "judged_same": 2,
        "known_different": 1,
        "known_different_accepted": 0,
    }
    assert "seeded   2 adaptive verdicts" in stdout.getvalue()

    # A gateway on the same storage finds them in its statistics.
    gateway = start_gateway(**storage_overrides)
    stats = httpx.get(
        f"{gateway.url}/admin/stats", headers={"authorization": f"Bearer {ADMIN_KEY}"}
    ).json()["adaptive"]
    tenant = next(row for row in stats["tenants"] if row["tenant"] == "acme")
    assert tenant["verdicts"] == 2 and tenant["seeded_verdicts"] == 2
    assert tenant["traffic"] == 2
    assert tenant["shadow_judged"] == 0  # no live traffic was judged
    judge = next(row for row in stats["judges"] if row["judge"] == "local")
    assert judge["known_different"] == 1 and judge["known_different_accepted"] == 0


def test_import_without_seed_adaptive_leaves_the_statistics_alone(
    upstream: FakeUpstream,
    tmp_path: Path,
    components_factory: ComponentsFactory,
    storage_overrides: dict[str, Any],
) -> None:
    system = {"role": "system", "content": unique_prompt("You answer in one sentence.")}
    file = tmp_path / "near.jsonl"
    file.write_bytes(b"\n".join(_seed_lines(system)))
    status, summary, text = _import(upstream, tmp_path, components_factory, storage_overrides, file)
    assert status == 0 and summary["stored"] == 6
    assert "seeded" not in summary and "seeded" not in text
