"""The APIs `gateway bench --apis` compares, and the request body each one sends.

Every API asks the same question in its own shape, with nothing else that changes the
answer, so the numbers measure what each door costs on top of the shared pipeline:

- `chat`: `POST /v1/chat/completions`, the question as the one user message;
- `completions`: `POST /v1/completions` (legacy), the question as the `prompt`;
- `responses`: `POST /v1/responses`, the question as the string `input` (`store` left
  at its default, on, as clients send it: the response is written before it is sent);
- `messages`: `POST /v1/messages` (Anthropic), the question as the one user message,
  with the `max_tokens` Anthropic's API requires and an `anthropic-version` header.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from gateway_tools.bench.constants import CHAT_PATH, MODEL

CHAT, COMPLETIONS, RESPONSES, MESSAGES = "chat", "completions", "responses", "messages"
# Required by the Messages API; any value does, the fake upstream ignores it.
MESSAGES_MAX_TOKENS = 256
ANTHROPIC_VERSION = "2023-06-01"


def _chat(prompt: str) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": prompt}]}


def _completions(prompt: str) -> dict[str, Any]:
    return {"model": MODEL, "prompt": prompt}


def _responses(prompt: str) -> dict[str, Any]:
    return {"model": MODEL, "input": prompt}


def _messages(prompt: str) -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": MESSAGES_MAX_TOKENS,
        "messages": [{"role": "user", "content": prompt}],
    }


@dataclass(frozen=True, slots=True)
class Api:
    name: str
    path: str
    # Header lines this API's clients send besides the key, each ending in CRLF.
    extra_headers: str
    _build: Callable[[str], dict[str, Any]]

    def body_object(self, prompt: str) -> dict[str, Any]:
        """The request body asking `prompt`, as a JSON object."""
        return self._build(prompt)

    def body(self, prompt: str) -> bytes:
        return orjson.dumps(self._build(prompt))


APIS: dict[str, Api] = {
    api.name: api
    for api in (
        Api(CHAT, CHAT_PATH, "", _chat),
        Api(COMPLETIONS, "/v1/completions", "", _completions),
        Api(RESPONSES, "/v1/responses", "", _responses),
        Api(MESSAGES, "/v1/messages", f"anthropic-version: {ANTHROPIC_VERSION}\r\n", _messages),
    )
}
API_NAMES = tuple(APIS)
# What the others are compared with.
REFERENCE_API = CHAT


def parse_apis(text: str) -> tuple[str, ...]:
    """`chat,responses` -> ("chat", "responses"), in `API_NAMES` order, each once;
    ValueError naming the choices for an unknown or empty list."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in APIS]
    if unknown or not names:
        raise ValueError(
            f"--apis takes a comma-separated list of {', '.join(API_NAMES)} (got {text!r})"
        )
    return tuple(name for name in API_NAMES if name in names)


def rotated(names: Sequence[str], round_index: int) -> list[str]:
    """`names` starting at a different one each round: no API is always measured first
    (or right after the direct call), so an order effect hits all of them alike."""
    if not names:
        return []
    start = round_index % len(names)
    return [*names[start:], *names[:start]]
