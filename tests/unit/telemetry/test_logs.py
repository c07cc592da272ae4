"""Structured logs: one JSON object per line, request ids, and nothing secret in them.

The tests write through a real handler (formatter + redacting filter) into a buffer,
so the filter that production uses is the one under test.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import logging
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from gateway.api.request_id import RequestIdMiddleware
from gateway.cli import _known_secrets
from gateway.settings import parse_config
from gateway.telemetry.logs import (
    REDACTED,
    JsonFormatter,
    RedactingFilter,
    TextFormatter,
    bind_request_id,
    configure_logging,
    current_request_id,
    installed_filter,
    reset_request_id,
)

# Every shape is assembled at run time so that no literal secret sits in the source.
SECRETS = {
    "openai": "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2",
    "openai_project": "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2",
    "anthropic": "sk-ant-api03-" + "Qq1Rr2Ss3Tt4Uu5Vv6Ww7",
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "slack": "xoxb-" + "123456789012-abcdefGHIJKL",
    "google": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "jwt": "eyJhbGciOiJIUzI1NiJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
PLAIN_SECRET = "hunter2-" + "not-a-pattern-42"
_logger_ids = itertools.count()


class Capture:
    def __init__(self, name: str, **filter_options: Any) -> None:
        self.stream = io.StringIO()
        self.filter = RedactingFilter(**filter_options)
        self.handler = logging.StreamHandler(self.stream)
        self.handler.setFormatter(JsonFormatter())
        self.handler.addFilter(self.filter)
        self.logger = logging.getLogger(name)
        self.logger.addHandler(self.handler)
        self.logger.setLevel(logging.INFO)
        self.logger.propagate = False

    @property
    def text(self) -> str:
        return self.stream.getvalue()

    def lines(self) -> list[dict[str, Any]]:
        lines = self.text.splitlines()
        parsed = [orjson.loads(line) for line in lines]
        assert all(isinstance(line, dict) for line in parsed)
        return parsed

    def last(self) -> dict[str, Any]:
        return self.lines()[-1]

    def close(self) -> None:
        self.logger.removeHandler(self.handler)
        self.logger.propagate = True
        self.logger.setLevel(logging.NOTSET)


@pytest.fixture
def capture() -> Iterator[Capture]:
    cap = Capture(f"test_logs.{next(_logger_ids)}")
    yield cap
    cap.close()


def assert_clean(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text


# --- secret shapes ------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_key_shapes_are_redacted_in_the_message(capture: Capture, kind: str) -> None:
    secret = SECRETS[kind]
    capture.logger.info(f"upstream rejected key {secret} for tenant acme")
    line = capture.last()
    assert line["message"] == f"upstream rejected key {REDACTED} for tenant acme"
    assert_clean(capture.text, secret)


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_key_shapes_are_redacted_in_percent_args(capture: Capture, kind: str) -> None:
    capture.logger.warning("calling %s with key %s", "openai", SECRETS[kind])
    assert capture.last()["message"] == f"calling openai with key {REDACTED}"
    assert_clean(capture.text, SECRETS[kind])


@pytest.mark.parametrize(
    ("message", "secret", "expected"),
    [
        (
            "Authorization: Bearer {}",
            "opaque-token-value-123",
            "Authorization: [REDACTED]",
        ),
        (
            "headers={{'authorization': 'Bearer {}', 'accept': 'json'}}",
            "opaque-token-value-123",
            "headers={'authorization': '[REDACTED]', 'accept': 'json'}",
        ),
        ("sent bearer {} upstream", "opaque.token~value", "sent bearer [REDACTED] upstream"),
        ("GET /v1/models?api_key={}&x=1", "plainvalue1", "GET /v1/models?api_key=[REDACTED]&x=1"),
        ('body {{"api_key": "{}", "model": "m"}}', "plainvalue1", None),
        ("login password={} ok", "letmein99", "login password=[REDACTED] ok"),
        ("OPENAI_API_KEY={}", "whatever-it-is", "OPENAI_API_KEY=[REDACTED]"),
        (
            "connecting to redis://:{}@cache:6379/0",
            "s3cretpw",
            "connecting to redis://[REDACTED]@cache:6379/0",
        ),
        (
            "fetch https://user:{}@example.com/x",
            "pa55word",
            "fetch https://[REDACTED]@example.com/x",
        ),
    ],
)
def test_header_pair_and_url_credentials_are_redacted(
    capture: Capture, message: str, secret: str, expected: str | None
) -> None:
    capture.logger.info(message.format(secret))
    line = capture.last()
    assert_clean(capture.text, secret)
    if expected is not None:
        assert line["message"] == expected
    else:
        assert REDACTED in line["message"]


def test_ordinary_words_are_left_alone(capture: Capture) -> None:
    message = "basic authentication failed; token budget 512; max_tokens=100; task-force"
    capture.logger.info(message)
    assert capture.last()["message"] == message


def test_mapping_args_are_redacted(capture: Capture) -> None:
    capture.logger.info(
        "tenant %(tenant)s key %(key)s",
        {"tenant": "acme", "key": SECRETS["openai"]},
    )
    assert capture.last()["message"] == f"tenant acme key {REDACTED}"
    assert_clean(capture.text, SECRETS["openai"])


def test_registered_secrets_are_redacted_everywhere() -> None:
    cap = Capture(f"test_logs.{next(_logger_ids)}", secrets=[PLAIN_SECRET, "short"])
    try:
        cap.filter.add_secret("tenant-key-0001")
        assert cap.filter.secret_count == 2  # "short" is under 8 characters: ignored
        cap.logger.info("key %s", PLAIN_SECRET, extra={"detail": f"x {PLAIN_SECRET} y"})
        cap.logger.info("tenant-key-0001 was used")
        try:
            raise RuntimeError(f"bad key {PLAIN_SECRET}")
        except RuntimeError:
            cap.logger.exception("failed")
        first, second, third = cap.lines()
        assert first["message"] == f"key {REDACTED}"
        assert first["detail"] == f"x {REDACTED} y"
        assert second["message"] == f"{REDACTED} was used"
        assert third["error"] == f"bad key {REDACTED}"
        assert_clean(cap.text, PLAIN_SECRET, "tenant-key-0001")
    finally:
        cap.close()


# --- exceptions ---------------------------------------------------------------------


def test_exception_gives_type_and_one_redacted_line_without_traceback(capture: Capture) -> None:
    try:
        raise ValueError(f"upstream said:\n  invalid key {SECRETS['openai']}\n  retry later")
    except ValueError:
        capture.logger.exception("call failed")
    line = capture.last()
    assert line["message"] == "call failed"
    assert line["error_type"] == "ValueError"
    assert line["error"] == f"upstream said: invalid key {REDACTED} retry later"
    assert "traceback" not in line
    assert_clean(capture.text, SECRETS["openai"])
    assert len(capture.text.splitlines()) == 1


def test_traceback_only_at_debug_and_redacted(capture: Capture) -> None:
    capture.logger.setLevel(logging.DEBUG)
    try:
        raise KeyError(SECRETS["github"])
    except KeyError:
        capture.logger.error("lookup failed", exc_info=True)
    line = capture.last()
    assert line["error_type"] == "KeyError"
    assert "Traceback (most recent call last)" in line["traceback"]
    assert REDACTED in line["traceback"]
    assert_clean(capture.text, SECRETS["github"])


def test_other_formatters_reuse_the_redacted_exception_text(capture: Capture) -> None:
    capture.handler.setFormatter(logging.Formatter("%(message)s"))
    try:
        raise RuntimeError(SECRETS["aws"])
    except RuntimeError:
        capture.logger.exception("boom")
    assert "RuntimeError" in capture.text
    assert_clean(capture.text, SECRETS["aws"])


# --- extra fields and prompt text ---------------------------------------------------


def test_extra_fields_are_redacted(capture: Capture) -> None:
    capture.logger.info(
        "calling upstream",
        extra={
            "headers": {"Authorization": "Bearer abc", "x-api-key": "k", "accept": "json"},
            "upstream": f"https://u:pw@host key={SECRETS['slack']}",
            "api_key": "anything",
            "attempt": 2,
        },
    )
    line = capture.last()
    assert line["headers"] == {"Authorization": REDACTED, "x-api-key": REDACTED, "accept": "json"}
    assert line["upstream"] == f"https://{REDACTED}@host key={REDACTED}"
    assert line["api_key"] == REDACTED
    assert line["attempt"] == 2
    assert_clean(capture.text, SECRETS["slack"], "Bearer abc", "anything")


def test_prompt_and_answer_text_are_redacted_by_default(capture: Capture) -> None:
    messages = [{"role": "user", "content": "my card is 4111"}]
    capture.logger.info(
        "stored",
        extra={"prompt": "what is my card?", "answer": "4111", "messages": messages},
    )
    capture.logger.info({"model": "m", "messages": messages, "input": "embed me"})
    capture.logger.info("request body %s", {"model": "m", "messages": messages})
    capture.logger.info("repr: Message(role='user', content='my card is 4111')")
    extras, as_dict, as_arg, as_repr = capture.lines()
    assert extras["prompt"] == "[REDACTED 16 chars]"
    assert extras["answer"] == "[REDACTED 4 chars]"
    assert extras["messages"] == "[REDACTED 19 chars]"  # "user" + the content
    assert as_dict["event"] == {
        "model": "m",
        "messages": "[REDACTED 19 chars]",
        "input": "[REDACTED 8 chars]",
    }
    assert "REDACTED 19 chars" in as_arg["message"]
    assert as_repr["message"] == "repr: Message(role='user', content='[REDACTED 15 chars]')"
    assert_clean(capture.text, "4111", "my card", "embed me")


def test_prompt_text_is_kept_with_include_text() -> None:
    cap = Capture(f"test_logs.{next(_logger_ids)}", include_text=True)
    try:
        cap.logger.info(
            "stored",
            extra={"prompt": "hello", "messages": [{"role": "user", "content": "hi"}]},
        )
        cap.logger.info(orjson.dumps({"answer": "fine", "api_key": "k"}).decode())
        first, second = cap.lines()
        assert first["prompt"] == "hello"
        assert first["messages"] == [{"role": "user", "content": "hi"}]
        assert second["event"] == {"answer": "fine", "api_key": REDACTED}  # keys still go
    finally:
        cap.close()


# --- format, request ids, robustness ------------------------------------------------


def test_lines_are_json_with_the_request_id_inside_a_bind(capture: Capture) -> None:
    capture.logger.info("before")
    token = bind_request_id("req_abc")
    try:
        capture.logger.info("during %d", 1)
    finally:
        reset_request_id(token)
    capture.logger.info("after")
    before, during, after = capture.lines()
    assert before["request_id"] is None
    assert during["request_id"] == "req_abc"
    assert during["message"] == "during 1"
    assert after["request_id"] is None
    assert set(during) == {"ts", "level", "logger", "message", "request_id"}
    assert during["level"] == "INFO"
    assert during["logger"] == capture.logger.name
    assert during["ts"].endswith("Z")
    time.strptime(during["ts"][:19], "%Y-%m-%dT%H:%M:%S")
    assert during["ts"][19] == "." and len(during["ts"]) == 24


def test_decision_line_is_embedded_as_event(capture: Capture) -> None:
    decision = {
        "request_id": "req_1",
        "tenant": "acme",
        "model": "m",
        "layer": "exact",
        "memory_tokens": 12,
        "status": 200,
        "stages_ms": {"auth": 0.1},
    }
    capture.logger.info(orjson.dumps(decision).decode())
    line = capture.last()
    assert line["event"] == decision
    assert "message" not in line


def test_broken_args_do_not_raise(capture: Capture, capsys: pytest.CaptureFixture[str]) -> None:
    capture.logger.info("count %d of %d", "x")
    capture.logger.info("%(missing)s", {"other": 1})
    first, second = capture.lines()
    assert first["message"] == second["message"] == "[log message could not be formatted]"
    assert "Logging error" not in capsys.readouterr().err


def test_unprintable_objects_do_not_raise(capture: Capture) -> None:
    class Hostile:
        def __str__(self) -> str:
            raise RuntimeError(SECRETS["openai"])

        __repr__ = __str__

    capture.logger.info("value %s", Hostile(), extra={"obj": Hostile()})
    line = capture.last()
    assert line["message"] == "[log record could not be redacted]"
    assert line["obj"] == REDACTED
    assert_clean(capture.text, SECRETS["openai"])


def test_pathological_input_is_fast(capture: Capture) -> None:
    started = time.perf_counter()
    capture.logger.info("x %s", "a.a-" * 50_000)
    capture.logger.info("y %s", "eyJ-" * 50_000)
    # A guard against catastrophic backtracking in the redaction patterns, not a speed
    # test: a quadratic pattern on these 200,000 characters takes minutes, the linear
    # ones well under a second idle (the bound leaves room for a loaded 2-core box).
    assert time.perf_counter() - started < 30.0
    assert len(capture.lines()) == 2


def test_text_format_is_one_line_and_filtered(capture: Capture) -> None:
    capture.handler.setFormatter(TextFormatter())
    token = bind_request_id("req_t")
    try:
        try:
            raise RuntimeError(f"bad\nkey {SECRETS['openai']}")
        except RuntimeError:
            capture.logger.exception("failed for %s", SECRETS["google"])
    finally:
        reset_request_id(token)
    (line,) = capture.text.splitlines()
    assert f"[req_t] failed for {REDACTED} | RuntimeError: bad key {REDACTED}" in line
    assert_clean(capture.text, SECRETS["openai"], SECRETS["google"])


async def test_middleware_binds_the_request_id_for_the_request() -> None:
    cap = Capture("test_logs.middleware")
    seen: list[str | None] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(current_request_id.get())
        cap.logger.info("handling")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "headers": [(b"x-request-id", b"client-id-1")]}
    try:
        await RequestIdMiddleware(app)(scope, receive, send)
        assert seen == ["client-id-1"]
        assert current_request_id.get() is None
        assert cap.last()["request_id"] == "client-id-1"
        assert (b"x-request-id", b"client-id-1") in sent[0]["headers"]
    finally:
        cap.close()


def test_request_id_is_copied_into_tasks() -> None:
    async def main() -> str | None:
        token = bind_request_id("req_task")
        try:
            return await asyncio.create_task(_read_request_id())
        finally:
            reset_request_id(token)

    assert asyncio.run(main()) == "req_task"


async def _read_request_id() -> str | None:
    return current_request_id.get()


# --- installation -------------------------------------------------------------------


@pytest.fixture
def saved_logging() -> Iterator[None]:
    root = logging.getLogger()
    names = ["uvicorn", "uvicorn.error", "uvicorn.access", "LiteLLM", "litellm", "httpx"]
    state = {
        name: (lg.handlers[:], lg.level, lg.propagate)
        for name, lg in {n: logging.getLogger(n) for n in names}.items()
    }
    root_state = (root.handlers[:], root.level)
    yield
    for handler in root.handlers[:]:
        if handler not in root_state[0]:
            root.removeHandler(handler)
    for handler in root_state[0]:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(root_state[1])
    for name, (handlers, level, propagate) in state.items():
        lg = logging.getLogger(name)
        lg.handlers = handlers
        lg.setLevel(level)
        lg.propagate = propagate


def test_configure_logging_twice_installs_one_handler(
    saved_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    uvicorn_access = logging.getLogger("uvicorn.access")
    uvicorn_access.addHandler(logging.StreamHandler(io.StringIO()))
    uvicorn_access.propagate = False

    configure_logging("info", secrets=[PLAIN_SECRET])
    configure_logging("debug", secrets=[PLAIN_SECRET])

    root = logging.getLogger()
    assert len(root.handlers) == 1
    assert root.level == logging.DEBUG
    installed = installed_filter()
    assert installed is not None and installed.secret_count == 1
    assert root.handlers[0].filters == [installed]
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        assert logging.getLogger(name).handlers == []
        assert logging.getLogger(name).propagate is True
    assert logging.getLogger("litellm").level == logging.CRITICAL

    # A third-party logger goes through the same handler, formatted and filtered.
    logging.getLogger("uvicorn.error").warning(
        "client sent %s and %s", PLAIN_SECRET, "sk-x1y2z3w4v5"
    )
    err = capsys.readouterr().err
    (line,) = [orjson.loads(text) for text in err.splitlines()]
    assert line["logger"] == "uvicorn.error"
    assert line["message"] == f"client sent {REDACTED} and {REDACTED}"
    assert_clean(err, PLAIN_SECRET)


def test_configure_logging_text_format(
    saved_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("warning", json=False)
    logging.getLogger("gateway.x").info("hidden")
    logging.getLogger("gateway.x").warning("shown %s", SECRETS["openai"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"WARNING gateway.x [-] shown {REDACTED}" in err
    with pytest.raises(ValueError, match="unknown log level"):
        configure_logging("loud")


def test_known_secrets_come_from_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    tenant_key, admin_key, upstream_key = "tk-" + "1" * 10, "ak-" + "2" * 10, "uk-" + "3" * 10
    config, _ = parse_config(
        {
            "model_list": [
                {
                    "model_name": "m",
                    "litellm_params": {
                        "model": "openai/m",
                        "api_key": upstream_key,
                        "aws_secret_access_key": "aws-" + "4" * 10,
                    },
                },
                {"model_name": "n", "litellm_params": {"model": "openai/n"}},
            ],
            "auth": {
                "tenants": [{"name": "acme", "api_keys": [tenant_key]}],
                "admin_keys": [admin_key],
            },
            "storage": {"backend": "redis", "redis_url": "redis://:redis-" + "5" * 8 + "@h:6379"},
        }
    )
    assert sorted(_known_secrets(config)) == sorted(
        [tenant_key, admin_key, upstream_key, "aws-" + "4" * 10, "redis-" + "5" * 8]
    )


def test_bookkeeping_extras_are_not_written(capture: Capture) -> None:
    capture.logger.info("started", extra={"color_message": "\x1b[1mstarted\x1b[0m"})
    line = capture.last()
    assert "color_message" not in line
    assert not any(key.startswith("_gw_") for key in line)
