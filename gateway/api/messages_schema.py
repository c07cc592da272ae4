"""Validation of Anthropic Messages request bodies (`POST /v1/messages` and
`/v1/messages/count_tokens`).

Checked here: what Anthropic's API requires (`model`, `messages`, `max_tokens`, the
ranges of the sampling parameters) and every content block the translation to chat
completions carries. A block it would silently drop (a `search_result`, a `text`
document, an image given by file id) is refused with a 400 instead: dropped, two
different requests would translate to the same chat body and share a cache entry.
Unknown top-level fields pass through to the provider, as on the chat route, except
the provider client's own settings (`reserved_field`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from gateway.api.schemas import INT64_MAX

_USER_BLOCKS = frozenset({"text", "image", "document", "tool_result"})
_ASSISTANT_BLOCKS = frozenset({"text", "tool_use", "thinking", "redacted_thinking"})
_TOOL_RESULT_BLOCKS = frozenset({"text", "image"})


def _source_problem(kind: str, source: Any) -> str | None:
    """What an image or document `source` lacks for the translation, or None."""
    if not isinstance(source, dict):
        return f"a '{kind}' block needs a 'source' object"
    source_type = source.get("type")
    if source_type == "base64":
        if isinstance(source.get("data"), str) and isinstance(source.get("media_type"), str):
            return None
        return f"a base64 '{kind}' source needs string 'media_type' and 'data'"
    if source_type == "url":
        return None if isinstance(source.get("url"), str) else "a url source needs a string 'url'"
    return f"a '{kind}' source of type '{source_type}' is not supported (use base64 or url)"


def _block_problem(block: Any, allowed: frozenset[str]) -> str | None:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return "a content block needs a string 'type'"
    kind = block["type"]
    if kind not in allowed:
        return f"content blocks of type '{kind}' are not supported here"
    if kind == "text" and not isinstance(block.get("text"), str):
        return "a 'text' block needs a string 'text'"
    if kind in ("image", "document"):
        return _source_problem(kind, block.get("source"))
    if kind == "tool_use":
        if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
            return "a 'tool_use' block needs string 'id' and 'name'"
        if not isinstance(block.get("input", {}), dict):
            return "a 'tool_use' block's 'input' must be an object"
    if kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            return "a 'tool_result' block needs a string 'tool_use_id'"
        content = block.get("content", "")
        if isinstance(content, list):
            for inner in content:
                problem = _block_problem(inner, _TOOL_RESULT_BLOCKS)
                if problem is not None:
                    return f"in a 'tool_result': {problem}"
        elif not isinstance(content, str):
            return "a 'tool_result' block's 'content' must be a string or a list of blocks"
    return None


class _OpenBody(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class AnthropicMessage(_OpenBody):
    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]

    @field_validator("content")
    @classmethod
    def _blocks(
        cls, value: str | list[dict[str, Any]], info: ValidationInfo
    ) -> str | list[dict[str, Any]]:
        if isinstance(value, list):
            allowed = _ASSISTANT_BLOCKS if info.data.get("role") == "assistant" else _USER_BLOCKS
            for index, block in enumerate(value):
                problem = _block_problem(block, allowed)
                if problem is not None:
                    raise ValueError(f"block {index}: {problem}")
        return value


class AnthropicMetadata(_OpenBody):
    user_id: str | None = Field(default=None, max_length=256)


class ToolChoice(_OpenBody):
    type: Literal["auto", "any", "tool", "none"]
    name: str | None = None


class _MessagesFields(_OpenBody):
    model: str = Field(min_length=1, max_length=256)
    messages: list[AnthropicMessage] = Field(min_length=1)
    system: str | list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: ToolChoice | None = None
    metadata: AnthropicMetadata | None = None

    @field_validator("system")
    @classmethod
    def _system_blocks(
        cls, value: str | list[dict[str, Any]] | None
    ) -> str | list[dict[str, Any]] | None:
        if isinstance(value, list):
            for index, block in enumerate(value):
                problem = _block_problem(block, frozenset({"text"}))
                if problem is not None:
                    raise ValueError(f"block {index}: {problem}")
        return value

    @field_validator("tools")
    @classmethod
    def _named_tools(cls, value: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        for index, tool in enumerate(value or []):
            if not isinstance(tool.get("name"), str):
                raise ValueError(f"tool {index} needs a string 'name'")
        return value


class MessagesRequest(_MessagesFields):
    """`POST /v1/messages`: `max_tokens` is required, as by Anthropic's API."""

    max_tokens: int = Field(ge=1, le=INT64_MAX)
    stream: bool | None = None
    temperature: float | None = Field(default=None, ge=0, le=1)
    top_p: float | None = Field(default=None, ge=0, le=1)
    top_k: int | None = Field(default=None, ge=0, le=INT64_MAX)
    stop_sequences: list[str] | None = None


class CountTokensRequest(_MessagesFields):
    """`POST /v1/messages/count_tokens`: the request without the generation settings."""
