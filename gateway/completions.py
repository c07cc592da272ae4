"""Conversions between OpenAI chat-completion shapes.

- `assemble_stream`: the chunks of a streamed answer -> one `chat.completion` object, so
  a streamed miss can be stored like a non-streamed one.
- `replay_chunks`: a stored `chat.completion` -> the chunks a streaming client expects
  (same content, tool calls, finish reason; usage chunk only when asked for).
- `finished_normally`: whether every choice ended in a reason the policy allows.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any


def new_completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


class StreamAssembler:
    """Accumulates streamed chunks into a complete `chat.completion` object."""

    def __init__(self) -> None:
        self._choices: dict[int, dict[str, Any]] = {}
        self._tool_calls: dict[int, dict[int, dict[str, Any]]] = {}
        self._meta: dict[str, Any] = {}
        self.usage: dict[str, Any] | None = None

    def add(self, chunk: Mapping[str, Any]) -> None:
        for key in ("id", "created", "model", "system_fingerprint"):
            if chunk.get(key) is not None and key not in self._meta:
                self._meta[key] = chunk[key]
        if chunk.get("usage"):
            self.usage = dict(chunk["usage"])
        for choice in chunk.get("choices") or []:
            index = int(choice.get("index", 0))
            state = self._choices.setdefault(
                index, {"role": None, "content": None, "refusal": None, "finish_reason": None}
            )
            delta = choice.get("delta") or {}
            if delta.get("role"):
                state["role"] = delta["role"]
            for field in ("content", "refusal"):
                piece = delta.get(field)
                if piece:
                    state[field] = (state[field] or "") + piece
            for call in delta.get("tool_calls") or []:
                self._add_tool_call(index, call)
            if choice.get("finish_reason"):
                state["finish_reason"] = choice["finish_reason"]

    def _add_tool_call(self, choice_index: int, call: Mapping[str, Any]) -> None:
        calls = self._tool_calls.setdefault(choice_index, {})
        slot = calls.setdefault(
            int(call.get("index", len(calls))),
            {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if call.get("id"):
            slot["id"] = call["id"]
        if call.get("type"):
            slot["type"] = call["type"]
        function = call.get("function") or {}
        if function.get("name"):
            slot["function"]["name"] += function["name"]
        if function.get("arguments"):
            slot["function"]["arguments"] += function["arguments"]

    def completion(self) -> dict[str, Any]:
        choices = []
        for index in sorted(self._choices):
            state = self._choices[index]
            message: dict[str, Any] = {
                "role": state["role"] or "assistant",
                "content": state["content"],
            }
            if state["refusal"]:
                message["refusal"] = state["refusal"]
            calls = self._tool_calls.get(index)
            if calls:
                message["tool_calls"] = [calls[i] for i in sorted(calls)]
            choices.append(
                {"index": index, "message": message, "finish_reason": state["finish_reason"]}
            )
        completion: dict[str, Any] = {
            "id": self._meta.get("id") or new_completion_id(),
            "object": "chat.completion",
            "created": self._meta.get("created") or int(time.time()),
            "model": self._meta.get("model", ""),
            "choices": choices,
        }
        if self._meta.get("system_fingerprint"):
            completion["system_fingerprint"] = self._meta["system_fingerprint"]
        if self.usage is not None:
            completion["usage"] = self.usage
        return completion


def finished_normally(completion: Mapping[str, Any], allowed: Iterable[str]) -> bool:
    """Every choice ended with an allowed reason and says something (text or tool
    calls): an empty answer, e.g. what a broken upstream stream leaves, is never
    worth serving again."""
    allowed_reasons = set(allowed)
    choices = completion.get("choices") or []
    return bool(choices) and all(
        c.get("finish_reason") in allowed_reasons and _has_answer(c) for c in choices
    )


def _has_answer(choice: Mapping[str, Any]) -> bool:
    message = choice.get("message") or {}
    content = message.get("content")
    has_text = isinstance(content, str) and content != ""
    has_parts = isinstance(content, list) and len(content) > 0
    return has_text or has_parts or bool(message.get("tool_calls") or message.get("function_call"))


def replay_chunks(
    completion: Mapping[str, Any], *, completion_id: str, include_usage: bool
) -> list[dict[str, Any]]:
    """Chunks equivalent to `completion`, in the order OpenAI streams them."""
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": completion.get("model", ""),
    }
    if completion.get("system_fingerprint"):
        base["system_fingerprint"] = completion["system_fingerprint"]
    chunks: list[dict[str, Any]] = []

    def emit(index: int, delta: dict[str, Any], finish_reason: str | None = None) -> None:
        choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        chunks.append({**base, "choices": [choice]})

    for choice in completion.get("choices") or []:
        index = choice.get("index", 0)
        message = choice.get("message") or {}
        emit(index, {"role": message.get("role") or "assistant", "content": ""})
        if message.get("content"):
            emit(index, {"content": message["content"]})
        if message.get("refusal"):
            emit(index, {"refusal": message["refusal"]})
        for position, call in enumerate(message.get("tool_calls") or []):
            emit(index, {"tool_calls": [{"index": position, **call}]})
        emit(index, {}, choice.get("finish_reason"))
    if include_usage and completion.get("usage"):
        chunks.append({**base, "choices": [], "usage": completion["usage"]})
    return chunks
