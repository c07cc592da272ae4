"""The tokens a forwarded request used: the usage the provider returned (a stream's
final usage chunk), else a tiktoken count of the messages sent and the text received,
marked as estimated."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gateway.memory.tokens import TokenCounter


@dataclass(frozen=True, slots=True)
class ChargedUsage:
    prompt_tokens: int
    completion_tokens: int
    estimated: bool  # counted with tiktoken: the provider reported no usage


def reported_usage(completion: Mapping[str, Any]) -> ChargedUsage | None:
    usage = completion.get("usage")
    if not isinstance(usage, Mapping):
        return None
    prompt, output = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(output, int):
        return None
    return ChargedUsage(prompt, output, estimated=False)


def estimated_usage(
    counter: TokenCounter, body: Mapping[str, Any], completion: Mapping[str, Any]
) -> ChargedUsage:
    messages = body.get("messages")
    prompt = counter.count_messages(list(messages)) if isinstance(messages, list) else 0
    return ChargedUsage(prompt, _answer_tokens(counter, completion), estimated=True)


def _answer_tokens(counter: TokenCounter, completion: Mapping[str, Any]) -> int:
    total = 0
    for choice in completion.get("choices") or []:
        message = choice.get("message") or {}
        for field in ("content", "refusal"):
            text = message.get(field)
            if isinstance(text, str):
                total += counter.count(text)
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            total += counter.count(str(function.get("name") or ""))
            total += counter.count(str(function.get("arguments") or ""))
    return total
