"""Conversions between OpenAI chat-completion shapes.

- `StreamAssembler`: the chunks of a streamed answer -> one `chat.completion` object, so
  a streamed miss is stored like a non-streamed one: content, refusal, tool calls,
  annotations (URL citations) and token logprobs included.
- `normalise_completion`: the one shape both modes are stored in.
- `replay_chunks`: a stored `chat.completion` -> the chunks a streaming client expects
  (the same fields; usage chunk only when asked for).
- `replay_gap`: what a stored answer lacks that a request asks for (logprobs, the
  number of choices): such an entry must not answer that request.
- `finished_normally`: whether every choice ended in a reason the policy allows.
- `hit_usage`: the `usage` a cache hit reports (policy `cache_hit_usage`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from typing import Any

# What a hit reports with `cache_hit_usage: zero` (or when the entry kept no usage):
# nothing spent upstream.
ZERO_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def hit_usage(stored: Any, mode: str) -> dict[str, Any]:
    """The `usage` of an answer served from cache. `original`: the stored answer's
    counts and detail fields as the provider reported them, with every prompt token
    marked cached (`prompt_tokens_details.cached_tokens`, OpenAI's field for prompt
    tokens not computed again), so clients that size budgets and context windows from
    `usage` read what the answer is; `zero`: zeros, as if nothing was spent."""
    if mode == "zero" or not isinstance(stored, Mapping) or not stored:
        return dict(ZERO_USAGE)
    usage = dict(stored)
    prompt_tokens = usage.get("prompt_tokens")
    if isinstance(prompt_tokens, int):
        details = usage.get("prompt_tokens_details")
        usage["prompt_tokens_details"] = {
            **(details if isinstance(details, Mapping) else {}),
            "cached_tokens": prompt_tokens,
        }
    return usage


def new_completion_id() -> str:
    # 128 random bits in hex, as uuid4().hex gives, without building a UUID (3 µs).
    return f"chatcmpl-{os.urandom(16).hex()}"


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
                index,
                {
                    "role": None,
                    "content": None,
                    "refusal": None,
                    "finish_reason": None,
                    "annotations": None,
                    "logprobs": None,
                },
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
            annotations = delta.get("annotations")
            if isinstance(annotations, list) and annotations:
                state["annotations"] = [*(state["annotations"] or []), *annotations]
            self._add_logprobs(state, choice.get("logprobs"))
            if choice.get("finish_reason"):
                state["finish_reason"] = choice["finish_reason"]

    @staticmethod
    def _add_logprobs(state: dict[str, Any], logprobs: Any) -> None:
        """Each chunk carries the logprobs of its own tokens: joined in order, they are
        the `choice.logprobs` a JSON answer has."""
        if not isinstance(logprobs, Mapping):
            return
        joined = state["logprobs"] or {"content": None, "refusal": None}
        for field in ("content", "refusal"):
            tokens = logprobs.get(field)
            if isinstance(tokens, list):
                joined[field] = [*(joined[field] or []), *tokens]
        state["logprobs"] = joined

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
            if state["annotations"]:
                message["annotations"] = state["annotations"]
            choices.append(
                {
                    "index": index,
                    "message": message,
                    "logprobs": state["logprobs"],
                    "finish_reason": state["finish_reason"],
                }
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


def normalise_completion(completion: Mapping[str, Any]) -> dict[str, Any]:
    """The stored form of an answer, whichever mode it arrived in: a `chat.completion`
    whose every choice has `index`, `message` (with `role` and `content`), `logprobs`
    (null when none) and `finish_reason`, as OpenAI's JSON answers have. Every other
    field (refusal, tool calls, annotations, audio...) is kept as it came."""
    choices = []
    for position, choice in enumerate(completion.get("choices") or []):
        message = dict(choice.get("message") or {})
        message.setdefault("role", "assistant")
        message.setdefault("content", None)
        choices.append(
            {
                **choice,
                "index": choice.get("index", position),
                "message": message,
                "logprobs": choice.get("logprobs"),
                "finish_reason": choice.get("finish_reason"),
            }
        )
    return {**completion, "object": "chat.completion", "choices": choices}


def replay_gap(completion: Mapping[str, Any], body: Mapping[str, Any]) -> str | None:
    """What `completion` cannot reproduce of what `body` asks for, or None when it can
    answer it in full: `choices` (not `n` of them) or `logprobs` (asked for, and a
    choice's text or refusal has none, e.g. an entry stored by a version that dropped
    streamed logprobs). Serving it anyway would silently drop a field the client
    relies on."""
    choices = completion.get("choices") or []
    wanted = body.get("n")
    if len(choices) != (wanted if isinstance(wanted, int) and wanted > 0 else 1):
        return "choices"
    if body.get("logprobs") and not all(_has_logprobs(choice, body) for choice in choices):
        return "logprobs"
    return None


def _has_logprobs(choice: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    message = choice.get("message") or {}
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, Mapping):
        # Only an answer with no text at all (tool calls alone) has none to give.
        return not (message.get("content") or message.get("refusal"))
    top = body.get("top_logprobs")
    wants_alternatives = isinstance(top, int) and top > 0
    for field in ("content", "refusal"):
        if not message.get(field):
            continue
        tokens = logprobs.get(field)
        if not isinstance(tokens, list) or not tokens:
            return False
        if wants_alternatives and not all(
            isinstance(token, Mapping) and token.get("top_logprobs") for token in tokens
        ):
            return False
    return True


def finished_normally(completion: Mapping[str, Any], allowed: Iterable[str]) -> bool:
    """Every choice ended with an allowed reason and says something (text, a refusal or
    tool calls): an empty answer, e.g. what a broken upstream stream leaves, is never
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
    # A refusal (`content` null, `refusal` set) is what the provider answered: replayed
    # like any other answer to the same request.
    return (
        has_text
        or has_parts
        or bool(message.get("refusal"))
        or bool(message.get("tool_calls") or message.get("function_call"))
    )


def replay_chunks(
    completion: Mapping[str, Any], *, completion_id: str, include_usage: bool
) -> list[dict[str, Any]]:
    """Chunks equivalent to `completion`, in the order OpenAI streams them: role, text
    (with its token logprobs), annotations, refusal (with its logprobs), tool calls,
    the finish reason; then usage when asked for. Joined by a client (or by
    `StreamAssembler`) they give back every field of `completion`."""
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": completion.get("model", ""),
    }
    if completion.get("system_fingerprint"):
        base["system_fingerprint"] = completion["system_fingerprint"]
    chunks: list[dict[str, Any]] = []

    def emit(
        index: int,
        delta: dict[str, Any],
        finish_reason: str | None = None,
        logprobs: dict[str, Any] | None = None,
    ) -> None:
        choice = {
            "index": index,
            "delta": delta,
            "logprobs": logprobs,
            "finish_reason": finish_reason,
        }
        chunks.append({**base, "choices": [choice]})

    for choice in completion.get("choices") or []:
        index = choice.get("index", 0)
        message = choice.get("message") or {}
        logprobs = choice.get("logprobs") if isinstance(choice.get("logprobs"), Mapping) else {}
        emit(index, {"role": message.get("role") or "assistant", "content": ""})
        content = message.get("content")
        if isinstance(content, str) and content:
            tokens = logprobs.get("content")
            emit(index, {"content": content}, logprobs=_chunk_logprobs(tokens, "content"))
        if message.get("annotations"):
            emit(index, {"annotations": message["annotations"]})
        if message.get("refusal"):
            tokens = logprobs.get("refusal")
            emit(
                index, {"refusal": message["refusal"]}, logprobs=_chunk_logprobs(tokens, "refusal")
            )
        for position, call in enumerate(message.get("tool_calls") or []):
            emit(index, {"tool_calls": [{"index": position, **call}]})
        emit(index, {}, choice.get("finish_reason"))
    if include_usage and completion.get("usage"):
        chunks.append({**base, "choices": [], "usage": completion["usage"]})
    return chunks


def _chunk_logprobs(tokens: Any, field: str) -> dict[str, Any] | None:
    """A chunk's `logprobs` carrying `tokens` (the whole text's, as the text is sent in
    one chunk) under `field`; None when there are none."""
    if not isinstance(tokens, list) or not tokens:
        return None
    other = "refusal" if field == "content" else "content"
    return {field: tokens, other: None}
