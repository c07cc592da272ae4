"""Structured JSON logs with request ids, and a filter that keeps secrets out of them.

`configure_logging` installs one stderr handler on the root logger. Every record, from
the gateway or from a third-party library, passes the handler's `RedactingFilter`,
which rewrites the message, its arguments, the exception text and any `extra` fields:

* API keys, bearer tokens, `Authorization` values, `api_key=`/`password=` pairs, URL
  credentials and the exact secrets registered at start-up become `[REDACTED]`;
* prompt and answer text (fields named `messages`, `content`, `prompt`, `answer`,
  `input`) becomes `[REDACTED n chars]`, unless the filter was built with
  `include_text=True`.

`JsonFormatter` then writes one JSON object per line, carrying the id of the request
being served (`bind_request_id`, called by `RequestIdMiddleware`).
"""

from __future__ import annotations

import contextvars
import json as _json
import logging
import re
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson

from gateway.telemetry.log_hygiene import quiet_leaky_loggers

__all__ = [
    "REDACTED",
    "TEXT_FIELDS",
    "JsonFormatter",
    "RedactingFilter",
    "TextFormatter",
    "bind_request_id",
    "configure_logging",
    "current_request_id",
    "installed_filter",
    "is_sensitive_key",
    "redact_text",
    "reset_request_id",
]

REDACTED: Final = "[REDACTED]"
TEXT_FIELDS: Final = frozenset({"messages", "content", "prompt", "answer", "input"})
MIN_SECRET_LENGTH: Final = 8
UVICORN_LOGGERS: Final = ("uvicorn", "uvicorn.error", "uvicorn.access")

# The id of the request being served; None outside a request.
current_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "gateway_request_id", default=None
)


def bind_request_id(request_id: str | None) -> contextvars.Token[str | None]:
    """Make log lines written in this context carry `request_id`; undo with the token."""
    return current_request_id.set(request_id)


def reset_request_id(token: contextvars.Token[str | None]) -> None:
    current_request_id.reset(token)


# --- what a secret looks like -------------------------------------------------------

_CREDENTIAL_NAMES = (
    r"api[_-]?key|apikey|password|passwd|secret|private[_-]?key|"
    r"(?:access|refresh|auth|id|session|bearer)[_-]?token|credentials?"
)
# A field name whose value is secret whatever it looks like: `openai_api_key`,
# `client_secret`, `aws_secret_access_key`, `Authorization`, `x-api-key`, `cookie`...
_SENSITIVE_KEY = re.compile(
    r"secret|passw(?:or)?d|credential|"
    r"(?:api_?key|apikey|private_?key|(?:access|refresh|auth|id|session|bearer)_?token|"
    r"authorization|cookie)$",
    re.IGNORECASE,
)

# (pattern, replacement); applied in order to every string that reaches a log line.
_PATTERNS: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    # PEM private keys.
    (
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
            re.DOTALL,
        ),
        REDACTED,
    ),
    # URL credentials: redis://:pass@host, https://user:pass@host, https://token@host.
    (
        re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]{0,30}://)[^/\s@'\"]{1,512}@"),
        rf"\g<scheme>{REDACTED}@",
    ),
    # Authorization / Proxy-Authorization header values (whole value, scheme included).
    (
        re.compile(
            r"(?P<key>\b(?:proxy-)?authorization[\"']?\s*[:=]\s*)"
            r"(?!\[REDACTED)(?:(?P<q>[\"'])(?:\\.|(?!(?P=q)).)*(?P=q)|[^\r\n\"',;}\]]+)",
            re.IGNORECASE,
        ),
        rf"\g<key>\g<q>{REDACTED}\g<q>",
    ),
    # Bearer tokens anywhere.
    (
        re.compile(r"\b(?P<scheme>bearer)\s+[A-Za-z0-9._~+/=-]+", re.IGNORECASE),
        rf"\g<scheme> {REDACTED}",
    ),
    # Basic credentials outside a header (base64 with a digit, +, / or =).
    (
        re.compile(r"\bBasic\s+(?=[A-Za-z]{0,512}[0-9+/=])[A-Za-z0-9+/]{8,}={0,2}"),
        f"Basic {REDACTED}",
    ),
    # key=value, key: value, "key": "value", 'key': 'value' for secret-named keys.
    (
        re.compile(
            rf"(?P<key>[\"']?[\w.-]{{0,40}}?(?:{_CREDENTIAL_NAMES})[\w-]{{0,24}}?[\"']?\s*[:=]\s*)"
            r"(?!\[REDACTED)(?:(?P<q>[\"'])(?:\\.|(?!(?P=q)).)*(?P=q)|[^\s,;&\"'}\])]+)",
            re.IGNORECASE,
        ),
        rf"\g<key>\g<q>{REDACTED}\g<q>",
    ),
    # Provider key shapes.
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), REDACTED),  # OpenAI, sk-proj-, sk-ant-
    (re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{8,}"), REDACTED),  # Stripe
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), REDACTED),  # AWS access key id
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),  # GitHub tokens
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), REDACTED),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{8,}"), REDACTED),  # Slack
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), REDACTED),  # Google API key
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), REDACTED),  # Hugging Face
    (re.compile(r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"), REDACTED),  # JWT
)

# Quoted prompt/answer text inside a plain message: "content": "...", content='...'.
_TEXT_IN_MESSAGE = re.compile(
    r"(?P<key>[\"']?\b[\w-]{0,40}?(?:content|prompt|answer|input)[\"']?\s*[:=]\s*)"
    r"(?P<q>[\"'])(?P<value>(?:\\.|(?!(?P=q)).)*)(?P=q)",
    re.IGNORECASE,
)

_MAX_DEPTH = 12
_MAX_TEXT_CHARS = 32_768
_MAX_ERROR_CHARS = 1000
_BROKEN_MESSAGE = "[log message could not be formatted]"
_UNREDACTABLE_MESSAGE = "[log record could not be redacted]"

# Attributes every LogRecord has; anything else on a record came from `extra=`.
_RECORD_ATTRIBUTES: Final = frozenset(
    {
        *logging.LogRecord("", 0, "", 0, "", (), None).__dict__,
        "message",
        "asctime",
        "taskName",
    }
)
# Extras that never reach the output (and are left as they are): uvicorn's ANSI copy of
# the message, litellm's "already redacted" stamp. Our own marks start with `_gw_`.
_DROPPED_EXTRAS: Final = frozenset({"color_message", "litellm_redacted"})
_PRIVATE_PREFIX = "_gw_"


def is_sensitive_key(name: str) -> bool:
    """True for a field name whose value is a credential (`api_key`, `client_secret`...)."""
    return _SENSITIVE_KEY.search(name.replace("-", "_")) is not None


def redact_text(text: str) -> str:
    """Replace every secret-shaped substring of `text` (patterns only, no known secrets).

    Text beyond 32,768 characters is cut off first, which bounds the regex work.
    """
    if len(text) > _MAX_TEXT_CHARS:
        text = text[:_MAX_TEXT_CHARS] + " [truncated]"
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _text_size(value: object, depth: int = 0) -> int:
    if isinstance(value, str):
        return len(value)
    if depth > _MAX_DEPTH:
        return 0
    if isinstance(value, Mapping):
        return sum(_text_size(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return sum(_text_size(v, depth + 1) for v in value)
    return 0


def _extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    return {
        key: value
        for key, value in record.__dict__.items()
        if key not in _RECORD_ATTRIBUTES
        and key not in _DROPPED_EXTRAS
        and not key.startswith(_PRIVATE_PREFIX)
    }


def _json_object(message: str) -> dict[str, Any] | None:
    """The message parsed, when it is a JSON object (the decision line); else None."""
    if not _looks_like_json_object(message):
        return None
    try:
        parsed = orjson.loads(message)
    except orjson.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _looks_like_json_object(text: str) -> bool:
    stripped = text.strip()
    return len(stripped) >= 2 and stripped[0] == "{" and stripped[-1] == "}"


class RedactingFilter(logging.Filter):
    """Rewrites every record so that no secret and (by default) no prompt text is left.

    Attach it to a handler, not a logger: handler filters see the records of every
    logger, third-party ones included. It never raises and never drops a record.
    """

    def __init__(
        self,
        *,
        include_text: bool = False,
        secrets: Iterable[str] = (),
        text_fields: Iterable[str] = TEXT_FIELDS,
    ) -> None:
        super().__init__()
        self.include_text = include_text
        self.text_fields = frozenset(name.lower() for name in text_fields)
        self._secrets: set[str] = set()
        self._secret_pattern: re.Pattern[str] | None = None
        for secret in secrets:
            self.add_secret(secret)

    # -- configuration ---------------------------------------------------------------

    def add_secret(self, value: str) -> None:
        """Redact this exact string wherever it appears. Shorter than 8 chars: ignored."""
        if not isinstance(value, str) or len(value) < MIN_SECRET_LENGTH:
            return
        if value in self._secrets:
            return
        self._secrets.add(value)
        # Longest first, so a secret that contains another is replaced whole.
        ordered = sorted(self._secrets, key=len, reverse=True)
        self._secret_pattern = re.compile("|".join(re.escape(s) for s in ordered))

    @property
    def secret_count(self) -> int:
        return len(self._secrets)

    # -- redaction of values ---------------------------------------------------------

    def redact_string(self, text: str) -> str:
        if len(text) > _MAX_TEXT_CHARS:
            text = text[:_MAX_TEXT_CHARS] + " [truncated]"
        if self._secret_pattern is not None:
            text = self._secret_pattern.sub(REDACTED, text)
        text = redact_text(text)
        if not self.include_text:
            text = _TEXT_IN_MESSAGE.sub(self._text_replacement, text)
        return text

    @staticmethod
    def _text_replacement(match: re.Match[str]) -> str:
        quote = match.group("q")
        size = len(match.group("value"))
        return f"{match.group('key')}{quote}[REDACTED {size} chars]{quote}"

    def redact_value(self, value: Any, depth: int = 0) -> Any:
        """A redacted copy of a JSON-like value; other objects become redacted strings."""
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, str):
            return self.redact_string(value)
        if isinstance(value, bytes | bytearray):
            return self.redact_string(bytes(value).decode("utf-8", "replace"))
        if depth > _MAX_DEPTH:
            return REDACTED
        if isinstance(value, Mapping):
            return self.redact_mapping(value, depth + 1)
        if isinstance(value, list | tuple | set | frozenset):
            return [self.redact_value(item, depth + 1) for item in value]
        return self.redact_string(str(value))

    def redact_field(self, key: str, value: Any, depth: int = 0) -> Any:
        """Redact `value` knowing it is stored under the field name `key`."""
        if is_sensitive_key(key):
            return REDACTED
        if not self.include_text and key.lower() in self.text_fields:
            return f"[REDACTED {_text_size(value)} chars]"
        return self.redact_value(value, depth)

    def redact_mapping(self, mapping: Mapping[Any, Any], depth: int = 0) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in mapping.items():
            name = self.redact_string(str(key))
            result[name] = self.redact_field(str(key), value, depth)
        return result

    # -- the filter ------------------------------------------------------------------

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_gw_redacted", False):
            return True
        try:
            self._redact_record(record)
        except Exception:
            self._scrub_record(record)
        record.__dict__["_gw_redacted"] = True
        return True

    def _redact_record(self, record: logging.LogRecord) -> None:
        if getattr(record, "_gw_request_id", None) is None:
            record.__dict__["_gw_request_id"] = current_request_id.get()

        message, event = self._redacted_message(record)
        record.msg = message
        record.args = ()
        record.__dict__["_gw_event"] = event

        for key, value in _extra_fields(record).items():
            setattr(record, key, self.redact_field(key, value))

        if record.exc_info and record.exc_info[0] is not None:
            exc_type, exc, _ = record.exc_info
            record.__dict__["_gw_error_type"] = exc_type.__name__
            record.__dict__["_gw_error"] = self._single_line_error(exc)
            try:
                trace = logging.Formatter().formatException(record.exc_info)
            except Exception:
                trace = "[traceback could not be formatted]"
            # Any formatter, ours or not, reuses exc_text instead of formatting again.
            record.exc_text = self.redact_string(trace)
        elif record.exc_text:
            record.exc_text = self.redact_string(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact_string(record.stack_info)

    def _redacted_message(self, record: logging.LogRecord) -> tuple[str, dict[str, Any] | None]:
        msg, args = record.msg, record.args
        if isinstance(msg, Mapping) and not args:
            event = self.redact_mapping(msg)
            return _dumps(event), event
        if isinstance(args, Mapping):
            record.args = self.redact_mapping(args)
        elif isinstance(args, tuple):
            record.args = tuple(
                self.redact_value(arg) if isinstance(arg, Mapping | list) else arg for arg in args
            )
        try:
            message = record.getMessage()
        except Exception:
            return _BROKEN_MESSAGE, None
        parsed = _json_object(message)
        if parsed is not None:
            event = self.redact_mapping(parsed)
            return _dumps(event), event
        return self.redact_string(message), None

    def _single_line_error(self, exc: BaseException | None) -> str:
        try:
            text = str(exc)
        except Exception:
            text = "[unprintable exception]"
        text = " ".join(self.redact_string(text).split())
        if len(text) > _MAX_ERROR_CHARS:
            text = text[:_MAX_ERROR_CHARS] + "..."
        return text

    def _scrub_record(self, record: logging.LogRecord) -> None:
        """Last resort when redaction itself failed: keep nothing that could leak."""
        try:
            record.msg = _UNREDACTABLE_MESSAGE
            record.args = ()
            record.__dict__["_gw_event"] = None
            if record.exc_info and record.exc_info[0] is not None:
                record.__dict__["_gw_error_type"] = record.exc_info[0].__name__
                record.__dict__["_gw_error"] = REDACTED
            record.exc_text = REDACTED if record.exc_info or record.exc_text else None
            record.stack_info = None
            for key in _extra_fields(record):
                setattr(record, key, REDACTED)
        except Exception:  # noqa: S110 - the filter must never raise
            pass


# --- formatting ---------------------------------------------------------------------


def _dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return _json.dumps(value, default=str, ensure_ascii=False)


def _timestamp(record: logging.LogRecord) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
    return f"{seconds}.{int(record.msecs):03d}Z"


def _record_request_id(record: logging.LogRecord) -> str | None:
    request_id = getattr(record, "_gw_request_id", None)
    if request_id is None:
        request_id = current_request_id.get()
    if request_id is None:
        explicit = getattr(record, "request_id", None)
        request_id = explicit if isinstance(explicit, str) else None
    return request_id if isinstance(request_id, str) else None


def _error_fields(record: logging.LogRecord) -> tuple[str, str] | None:
    """`(error_type, error)`: from the filter when it ran, else pattern-redacted here."""
    if not record.exc_info or record.exc_info[0] is None:
        return None
    error_type = getattr(record, "_gw_error_type", None)
    error = getattr(record, "_gw_error", None)
    if isinstance(error_type, str) and isinstance(error, str):
        return error_type, error
    try:
        text = str(record.exc_info[1])
    except Exception:
        text = "[unprintable exception]"
    return record.exc_info[0].__name__, " ".join(redact_text(text).split())[:_MAX_ERROR_CHARS]


def _wants_traceback(record: logging.LogRecord) -> bool:
    return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def _traceback(record: logging.LogRecord) -> str:
    if record.exc_text:
        return record.exc_text
    if record.exc_info:
        return redact_text(logging.Formatter().formatException(record.exc_info))
    return ""


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, message or event, request_id, ...

    A message that is itself a JSON object (the decision line) is embedded, parsed, as
    `event` instead of `message`. Exceptions give `error_type` and a one-line `error`;
    the traceback is added only when the record's logger is enabled for DEBUG.
    `extra=` fields are added at the top level (`extra_<name>` if the name is taken).
    """

    _RESERVED = frozenset(
        {"ts", "level", "logger", "message", "event", "request_id", "error_type", "error"}
        | {"traceback", "stack"}
    )

    def format(self, record: logging.LogRecord) -> str:
        try:
            return self._format(record)
        except Exception:
            fallback = {
                "ts": _timestamp(record),
                "level": record.levelname,
                "logger": record.name,
                "message": _UNREDACTABLE_MESSAGE,
                "request_id": _record_request_id(record),
            }
            return _dumps(fallback)

    def _format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname,
            "logger": record.name,
        }
        event = getattr(record, "_gw_event", None)
        if event is None:
            message = record.getMessage()
            event = _json_object(message)
            if event is None:
                out["message"] = message
        if event is not None:
            out["event"] = event
        out["request_id"] = _record_request_id(record)
        error = _error_fields(record)
        if error is not None:
            out["error_type"], out["error"] = error
            if _wants_traceback(record):
                out["traceback"] = _traceback(record)
        if record.stack_info and _wants_traceback(record):
            out["stack"] = record.stack_info
        for key, value in _extra_fields(record).items():
            if key == "request_id":
                continue
            out[f"extra_{key}" if key in self._RESERVED else key] = value
        return _dumps(out)


class TextFormatter(logging.Formatter):
    """Human-readable single line for local development, same fields as the JSON one."""

    def format(self, record: logging.LogRecord) -> str:
        try:
            request_id = _record_request_id(record) or "-"
            parts = [
                _timestamp(record),
                record.levelname,
                record.name,
                f"[{request_id}]",
                record.getMessage(),
            ]
            error = _error_fields(record)
            if error is not None:
                parts.append(f"| {error[0]}: {error[1]}")
            extras = {k: v for k, v in _extra_fields(record).items() if k != "request_id"}
            if extras:
                parts.append(_dumps(extras))
            line = " ".join(parts)
            if error is not None and _wants_traceback(record):
                line += "\n" + _traceback(record)
            return line
        except Exception:
            return f"{_timestamp(record)} {record.levelname} {record.name} {_UNREDACTABLE_MESSAGE}"


# --- installation -------------------------------------------------------------------

_HANDLER_MARK = "_gw_handler"


def configure_logging(level: str, *, json: bool = True, secrets: Iterable[str] = ()) -> None:
    """Send every logger through one redacting stderr handler on the root logger.

    Replaces the root logger's handlers (calling it again leaves one handler), routes
    uvicorn's loggers to the root, and pins leaky third-party loggers high. `secrets`
    are exact strings (keys, passwords) redacted wherever they appear.
    """
    levels = logging.getLevelNamesMapping()
    numeric = levels.get(level.upper())
    if numeric is None:
        raise ValueError(f"unknown log level {level!r}")

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json else TextFormatter())
    handler.addFilter(RedactingFilter(secrets=secrets))
    setattr(handler, _HANDLER_MARK, True)

    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
        if getattr(old, _HANDLER_MARK, False):
            old.close()
    root.addHandler(handler)
    root.setLevel(numeric)

    for name in UVICORN_LOGGERS:
        uvicorn_logger = logging.getLogger(name)
        for old in list(uvicorn_logger.handlers):
            uvicorn_logger.removeHandler(old)
        uvicorn_logger.propagate = True
        uvicorn_logger.setLevel(logging.NOTSET)
    quiet_leaky_loggers()


def installed_filter() -> RedactingFilter | None:
    """The filter `configure_logging` installed (to add secrets or set `include_text`)."""
    for handler in logging.getLogger().handlers:
        if getattr(handler, _HANDLER_MARK, False):
            for candidate in handler.filters:
                if isinstance(candidate, RedactingFilter):
                    return candidate
    return None
