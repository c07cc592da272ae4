"""A `chat.completion` -> the Responses API's `response` object.

Written here rather than with litellm's bridge (which does this from its own
`ModelResponse` type): the gateway holds plain dicts, a cached answer must render the
same as a live one, and the streamed events (`responses_stream.py`) must name the same
item ids as the final object, which `OutputIds` shares between the two.

Usage: `input_tokens`, `output_tokens`, `total_tokens` and their details from the chat
usage; on a cache hit, the stored answer's counts with every input token marked cached
(`input_tokens_details.cached_tokens`), so budget logic in clients sees the size of the
conversation, and sees it was not paid for again.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# finish_reason -> the `incomplete_details.reason` of an incomplete response
_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(24)}"


@dataclass
class OutputIds:
    """The ids of one response's output items: the message item's, and each tool
    call's by its position, made on first use."""

    message: str = field(default_factory=lambda: new_id("msg"))
    _calls: dict[int, str] = field(default_factory=dict)

    def call(self, position: int) -> str:
        if position not in self._calls:
            self._calls[position] = new_id("fc")
        return self._calls[position]


@dataclass(frozen=True, slots=True)
class ResponseEcho:
    """What a `response` object repeats of its request."""

    model: str
    body: Mapping[str, Any]
    previous_response_id: str | None
    store: bool

    def fields(self) -> dict[str, Any]:
        body = self.body
        text = body.get("text") if isinstance(body.get("text"), dict) else {}
        reasoning = body.get("reasoning") if isinstance(body.get("reasoning"), dict) else None
        return {
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": self.model,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": self.previous_response_id,
            "reasoning": {"effort": None, "summary": None, **(reasoning or {})},
            "store": self.store,
            "temperature": body.get("temperature", 1.0),
            "text": {"format": {"type": "text"}, **(text or {})},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": list(body.get("tools") or []),
            "top_p": body.get("top_p", 1.0),
            "truncation": body.get("truncation", "disabled"),
            "user": body.get("user"),
            "metadata": dict(body.get("metadata") or {}),
        }


def shell(
    response_id: str, created_at: int, echo: ResponseEcho, status: str = "in_progress"
) -> dict[str, Any]:
    """A response with no output yet (the `response.created` event's)."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "output": [],
        "usage": None,
        **echo.fields(),
    }


def _annotation(annotation: Mapping[str, Any]) -> dict[str, Any] | None:
    if annotation.get("type") == "url_citation" and isinstance(
        annotation.get("url_citation"), Mapping
    ):
        citation = annotation["url_citation"]
        return {
            "type": "url_citation",
            "start_index": citation.get("start_index", 0),
            "end_index": citation.get("end_index", 0),
            "title": citation.get("title", ""),
            "url": citation.get("url", ""),
        }
    return None


def message_content(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The content parts of the output message item: its text, or its refusal."""
    parts: list[dict[str, Any]] = []
    content = message.get("content")
    if isinstance(content, str) and content:
        annotations = [
            rendered
            for annotation in message.get("annotations") or []
            if isinstance(annotation, Mapping) and (rendered := _annotation(annotation))
        ]
        parts.append(
            {"type": "output_text", "text": content, "annotations": annotations, "logprobs": []}
        )
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append({"type": "refusal", "refusal": refusal})
    return parts


def message_item(item_id: str, content: list[dict[str, Any]], status: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    }


def call_item(item_id: str, call: Mapping[str, Any], status: str) -> dict[str, Any]:
    function = call.get("function") or {}
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "call_id": call.get("id") or item_id,
        "name": function.get("name", ""),
        "arguments": function.get("arguments", ""),
    }


def output_items(completion: Mapping[str, Any], ids: OutputIds) -> list[dict[str, Any]]:
    """The output items of the first choice (the Responses API has no `n`)."""
    choices = completion.get("choices") or []
    if not choices:
        return []
    message = choices[0].get("message") or {}
    status = "incomplete" if choices[0].get("finish_reason") in _INCOMPLETE else "completed"
    items: list[dict[str, Any]] = []
    content = message_content(message)
    if content:
        items.append(message_item(ids.message, content, status))
    for position, call in enumerate(message.get("tool_calls") or []):
        items.append(call_item(ids.call(position), call, "completed"))
    return items


def responses_usage(usage: Mapping[str, Any] | None, served_from_cache: bool) -> dict[str, Any]:
    usage = usage or {}
    input_tokens = int(usage.get("prompt_tokens") or 0)
    output_tokens = int(usage.get("completion_tokens") or 0)
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    cached = input_tokens if served_from_cache else int(prompt_details.get("cached_tokens") or 0)
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {
            "reasoning_tokens": int(completion_details.get("reasoning_tokens") or 0)
        },
        "total_tokens": int(usage.get("total_tokens") or input_tokens + output_tokens),
    }


def response_object(
    completion: Mapping[str, Any],
    *,
    response_id: str,
    created_at: int,
    echo: ResponseEcho,
    ids: OutputIds,
    usage: Mapping[str, Any] | None,
    served_from_cache: bool,
) -> dict[str, Any]:
    """The whole `response` for `completion`. `usage`: the chat usage to report (on a
    hit, the stored answer's original usage)."""
    choices = completion.get("choices") or []
    finish = choices[0].get("finish_reason") if choices else None
    incomplete = _INCOMPLETE.get(str(finish))
    return {
        **shell(response_id, created_at, echo, "incomplete" if incomplete else "completed"),
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "output": output_items(completion, ids),
        "usage": responses_usage(usage, served_from_cache),
    }


def now_seconds() -> int:
    return int(time.time())
