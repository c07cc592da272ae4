"""Validation of OpenAI request bodies.

The models check what the gateway relies on and reject wrong types; unknown fields are
allowed and the original JSON object (not a re-serialisation) is what gets forwarded,
so parameters the gateway does not know pass through unchanged. Two kinds of field are
refused even so: the parameters the provider's client reserves for itself (litellm's own
keyword arguments: `api_base`, `api_key`, `mock_response`, `timeout`, ...; the provider
says which, `RequestRules`), which would steer the gateway's provider call rather than
the model, and values the provider layer cannot take (a content part without a type, `tool_calls`
that is not a list), which would otherwise fail there as a 502.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from gateway.errors import InvalidRequest
from gateway.providers.protocol import RequestRules

ModelT = TypeVar("ModelT", bound=BaseModel)

# The validation context's key for the provider's `RequestRules` (see `parse_body`).
_RULES = "request_rules"

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# OpenAI request fields litellm fails on when null (AttributeError in its Router, a 502
# here). Null means "not given" in OpenAI's API, so they are left out of what is sent.
_DROPPED_WHEN_NULL = ("metadata",)


class _OpenBody(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


def _part_problem(kind: str, part: dict[str, Any]) -> str | None:
    """What OpenAI's schema requires of a part of this type and `part` lacks, or None.
    litellm does not check these: it failed on some (a 502 after the router's retries,
    counted against a healthy deployment) and sent others on for the provider to refuse."""
    if kind == "text":
        return None if isinstance(part.get("text"), str) else "needs a string 'text'"
    if kind == "image_url":
        image = part.get("image_url")
        # OpenAI's {"url": ...}; litellm also takes the URL as a plain string.
        if isinstance(image, str) or (
            isinstance(image, dict) and isinstance(image.get("url"), str)
        ):
            return None
        return "needs 'image_url' with a string 'url'"
    if kind == "input_audio":
        audio = part.get("input_audio")
        if (
            isinstance(audio, dict)
            and isinstance(audio.get("data"), str)
            and isinstance(audio.get("format"), str)
        ):
            return None
        return "needs 'input_audio' with a string 'data' and 'format'"
    if kind == "file":
        file = part.get("file")
        if not isinstance(file, dict):
            return "needs a 'file' object"
        given = [file.get(name) for name in ("file_id", "file_data") if name in file]
        if not given or not all(isinstance(value, str) for value in given):
            return "needs a string 'file_id' or 'file_data' in 'file'"
        return None
    return None


def _check_parts(parts: list[dict[str, Any]], user_part_types: frozenset[str] | None) -> None:
    """`user_part_types`: the types allowed in a user message's parts (None: not a user
    message, any type)."""
    for index, part in enumerate(parts):
        kind = part.get("type")
        if not isinstance(kind, str):
            raise ValueError(f"content part {index} needs a string 'type'")
        if user_part_types is not None and kind not in user_part_types:
            raise ValueError(f"content part {index} has an unknown type")
        problem = _part_problem(kind, part)
        if problem is not None:
            raise ValueError(f"content part {index} of type '{kind}' {problem}")


class ChatMessage(_OpenBody):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None

    @field_validator("content")
    @classmethod
    def _typed_parts(
        cls, value: str | list[dict[str, Any]] | None, info: ValidationInfo
    ) -> str | list[dict[str, Any]] | None:
        if isinstance(value, list):
            # Validated outside `parse_body` (no rules): only the parts' own shape.
            rules: RequestRules | None = (info.context or {}).get(_RULES)
            user = info.data.get("role") == "user"
            _check_parts(value, rules.user_content_part_types() if user and rules else None)
        return value

    @model_validator(mode="after")
    def _developer_content(self) -> ChatMessage:
        # litellm rewrites developer messages and reads their content (a KeyError there).
        if self.role == "developer" and self.content is None:
            raise ValueError("a developer message needs content")
        return self


class StreamOptions(_OpenBody):
    include_usage: bool | None = None


class ChatCompletionRequest(_OpenBody):
    model: str = Field(min_length=1, max_length=256)
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool | None = None
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    n: int | None = Field(default=None, ge=1, le=128)
    # Passed on as sent (the provider knows the model's limit), but a 64-bit integer.
    max_tokens: int | None = Field(default=None, ge=1, le=INT64_MAX)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=INT64_MAX)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    stop: str | list[str] | None = None
    seed: int | None = Field(default=None, ge=INT64_MIN, le=INT64_MAX)
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    user: str | None = None
    metadata: dict[str, Any] | None = None


class EmbeddingRequest(_OpenBody):
    model: str = Field(min_length=1, max_length=256)
    input: str | list[str] | list[int] | list[list[int]]
    user: str | None = None
    metadata: dict[str, Any] | None = None


def _invalid(error: ValidationError) -> InvalidRequest:
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"])
    if first["type"] == "json_invalid":
        # orjson accepted the text: pydantic's parser refused it, for nesting deeper
        # than its recursion limit (about 200 levels).
        return InvalidRequest(
            "The request body is not valid JSON or is nested too deeply.", code="invalid_json"
        )
    message = f"{location}: {first['msg']}" if location else first["msg"]
    return InvalidRequest(message, param=location or None)


def load_json_object(raw: bytes) -> dict[str, Any]:
    """`raw` as a JSON object, or a 400. orjson is the one judge of what is JSON: it
    refuses NaN/Infinity, invalid UTF-8, lone surrogates and nesting deeper than 1024."""
    if not raw:
        raise InvalidRequest("The request body is empty; send a JSON object.", code="invalid_json")
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        # orjson's reason and position; never the text itself.
        raise InvalidRequest(
            f"The request body is not valid JSON ({exc.msg}: line {exc.lineno} "
            f"column {exc.colno}).",
            code="invalid_json",
        ) from None
    if not isinstance(value, dict):
        raise InvalidRequest(
            f"The request body must be a JSON object, not {_json_kind(value)}.",
            code="invalid_request",
        )
    return value


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "a number"


def too_many_messages(max_messages: int) -> InvalidRequest:
    return InvalidRequest(
        f"'messages' has more than {max_messages} items, the most the gateway accepts.",
        param="messages",
        code="array_above_max_length",
    )


def too_many_content_parts(max_content_parts: int) -> InvalidRequest:
    return InvalidRequest(
        f"The messages have more than {max_content_parts} content parts in all, the most "
        "the gateway accepts.",
        param="messages",
        code="array_above_max_length",
    )


def check_chat_counts(body: dict[str, Any], max_messages: int, max_content_parts: int) -> None:
    """A 400 for more messages or content parts than the gateway takes, checked on the
    parsed object before the (far costlier) validation of each message."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return  # validation names what is wrong with it
    if len(messages) > max_messages:
        raise too_many_messages(max_messages)
    parts = sum(
        len(message["content"])
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("content"), list)
    )
    if parts > max_content_parts:
        raise too_many_content_parts(max_content_parts)


def parse_body(
    raw: bytes,
    schema: type[ModelT],
    precheck: Callable[[dict[str, Any]], None] | None = None,
    *,
    rules: RequestRules | None = None,
) -> tuple[dict[str, Any], ModelT]:
    """Validate `raw` against `schema`; return the original object and the model.
    `precheck` sees the parsed object first and may refuse it (raise InvalidRequest).
    `rules`: the provider's, required for the OpenAI bodies (what is forwarded)."""
    if issubclass(schema, _OpenBody) and rules is None:
        raise TypeError(f"parsing {schema.__name__} needs the provider's RequestRules")
    # The client's object exactly as sent, parsed first: what pydantic's parser accepts
    # but orjson refuses (NaN, Infinity, 1e400) must be a 400, not a failure later.
    body = load_json_object(raw)
    if precheck is not None:
        precheck(body)
    try:
        model = schema.model_validate_json(raw, context={_RULES: rules})
    except ValidationError as exc:
        raise _invalid(exc) from None
    if rules is not None and isinstance(model, _OpenBody):
        for name in body:
            if rules.reserved_parameter(name):
                raise InvalidRequest(
                    f"'{name}' is a setting of the gateway's provider client, not a request "
                    "parameter; it cannot be set by a request.",
                    param=name,
                )
        for name in _DROPPED_WHEN_NULL:
            if name in body and body[name] is None:
                del body[name]
    return body, model
