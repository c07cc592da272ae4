"""Validation of OpenAI request bodies.

The models check what the gateway relies on and reject wrong types; unknown fields are
allowed and the original JSON object (not a re-serialisation) is what gets forwarded,
so parameters the gateway does not know pass through unchanged.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.errors import InvalidRequest

ModelT = TypeVar("ModelT", bound=BaseModel)


class _OpenBody(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class ChatMessage(_OpenBody):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None


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
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    stop: str | list[str] | None = None
    seed: int | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    user: str | None = None


class EmbeddingRequest(_OpenBody):
    model: str = Field(min_length=1, max_length=256)
    input: str | list[str] | list[int] | list[list[int]]


def _invalid(error: ValidationError) -> InvalidRequest:
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"])
    if first["type"] == "json_invalid":
        return InvalidRequest("The request body is not valid JSON.", code="invalid_json")
    message = f"{location}: {first['msg']}" if location else first["msg"]
    return InvalidRequest(message, param=location or None)


def parse_body(raw: bytes, schema: type[ModelT]) -> tuple[dict[str, Any], ModelT]:
    """Validate `raw` against `schema`; return the original object and the model."""
    if not raw:
        raise InvalidRequest("The request body is empty; send a JSON object.", code="invalid_json")
    try:
        model = schema.model_validate_json(raw)
    except ValidationError as exc:
        raise _invalid(exc) from None
    # Parsed a second time (cheap) to keep the client's object exactly as sent.
    body: dict[str, Any] = orjson.loads(raw)
    return body, model
