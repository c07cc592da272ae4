"""Legacy completions (`POST /v1/completions`) <-> the chat body the pipeline works on.

Written here rather than taken from litellm: litellm's text-completion path sends a
prompt to a provider's own completions endpoint, while the gateway answers a prompt
with the chat model (one user message), so that it is classified, cached, reviewed and
replayed like the same question asked through chat completions.

- `LegacyCompletionRequest` validates what the translation relies on;
- `chat_body`: the request -> a chat-completions body with one user message;
- `text_completion`: a `chat.completion` -> a `text_completion` object;
- `LegacyChunks`: chat-completion chunks -> `text_completion` stream chunks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator

from gateway.api.schemas import INT64_MAX, INT64_MIN, _OpenBody
from gateway.errors import InvalidRequest

# Legacy fields the translation reads; every other field goes on as sent.
_TRANSLATED = frozenset({"prompt", "echo", "suffix", "best_of", "logprobs"})
# The most alternatives per token the legacy API gives (`logprobs`: 0..5).
MAX_LEGACY_LOGPROBS = 5


class LegacyCompletionRequest(_OpenBody):
    model: str = Field(min_length=1, max_length=256)
    prompt: str | list[Any]
    stream: bool | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    n: int | None = Field(default=None, ge=1, le=128)
    max_tokens: int | None = Field(default=None, ge=1, le=INT64_MAX)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    stop: str | list[str] | None = None
    seed: int | None = Field(default=None, ge=INT64_MIN, le=INT64_MAX)
    logprobs: int | None = Field(default=None, ge=0, le=MAX_LEGACY_LOGPROBS)
    echo: bool | None = None
    suffix: str | None = None
    best_of: int | None = Field(default=None, ge=1)
    user: str | None = None
    metadata: dict[str, Any] | None = None

    @field_validator("prompt")
    @classmethod
    def _one_text_prompt(cls, value: str | list[Any]) -> str | list[Any]:
        if isinstance(value, list) and not (len(value) == 1 and isinstance(value[0], str)):
            # Several prompts (or token arrays) would be several questions with one
            # answer object: each has its own cache entry, so each its own request.
            raise ValueError(
                "the gateway takes one prompt per request: a string, or a list of one "
                "string (token arrays and several prompts are not supported; send each "
                "prompt in its own request)"
            )
        return value


def prompt_text(parsed: LegacyCompletionRequest) -> str:
    prompt = parsed.prompt
    return prompt if isinstance(prompt, str) else str(prompt[0])


def chat_body(body: Mapping[str, Any], parsed: LegacyCompletionRequest) -> dict[str, Any]:
    """The chat-completions body that asks the same: the prompt as the one user message,
    the sampling parameters as they are, `logprobs: N` as `logprobs: true` with
    `top_logprobs: N`. What the chat model cannot do is refused (400)."""
    if parsed.echo:
        raise InvalidRequest(
            "'echo' is not supported: the prompt is answered by a chat model, which does "
            "not return it.",
            param="echo",
        )
    if parsed.suffix:
        raise InvalidRequest(
            "'suffix' is not supported: the prompt is answered by a chat model, which "
            "does not insert text.",
            param="suffix",
        )
    if parsed.best_of not in (None, 1):
        raise InvalidRequest("'best_of' is not supported (only 1).", param="best_of")
    chat: dict[str, Any] = {"model": parsed.model}
    chat["messages"] = [{"role": "user", "content": prompt_text(parsed)}]
    for name, value in body.items():
        if name not in _TRANSLATED and name != "model":
            chat[name] = value
    if parsed.logprobs is not None:
        chat["logprobs"] = True
        chat["top_logprobs"] = parsed.logprobs
    return chat


def legacy_id(chat_id: Any) -> str:
    text = str(chat_id or "")
    return "cmpl-" + text.removeprefix("chatcmpl-")


def _text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def legacy_logprobs(chat_logprobs: Any, start_offset: int = 0) -> dict[str, Any] | None:
    """Chat token logprobs (`choice.logprobs.content`) in the legacy shape: parallel
    lists of tokens, their logprobs, their alternatives and their character offsets."""
    if not isinstance(chat_logprobs, Mapping):
        return None
    tokens = chat_logprobs.get("content")
    if not isinstance(tokens, list):
        return None
    result: dict[str, list[Any]] = {
        "tokens": [],
        "token_logprobs": [],
        "top_logprobs": [],
        "text_offset": [],
    }
    offset = start_offset
    for token in tokens:
        if not isinstance(token, Mapping):
            continue
        text = str(token.get("token", ""))
        result["tokens"].append(text)
        result["token_logprobs"].append(token.get("logprob"))
        alternatives = token.get("top_logprobs") or []
        result["top_logprobs"].append(
            {
                str(alt.get("token", "")): alt.get("logprob")
                for alt in alternatives
                if isinstance(alt, Mapping)
            }
        )
        result["text_offset"].append(offset)
        offset += len(text)
    return result


def text_completion(completion: Mapping[str, Any]) -> dict[str, Any]:
    """A `chat.completion` as the `text_completion` the legacy API answers."""
    choices = []
    for position, choice in enumerate(completion.get("choices") or []):
        message = choice.get("message") or {}
        choices.append(
            {
                "text": _text(message),
                "index": choice.get("index", position),
                "logprobs": legacy_logprobs(choice.get("logprobs")),
                "finish_reason": choice.get("finish_reason"),
            }
        )
    result = _legacy_object(completion, choices)
    if completion.get("usage") is not None:
        result["usage"] = completion["usage"]
    return result


def _legacy_object(source: Mapping[str, Any], choices: list[dict[str, Any]]) -> dict[str, Any]:
    """A `text_completion` object (or stream chunk) holding `choices`, with the id, time,
    model and fingerprint of the chat `source` it translates; usage is the caller's."""
    result: dict[str, Any] = {
        "id": legacy_id(source.get("id")),
        "object": "text_completion",
        "created": source.get("created"),
        "model": source.get("model", ""),
        "choices": choices,
    }
    if source.get("system_fingerprint"):
        result["system_fingerprint"] = source["system_fingerprint"]
    return result


class LegacyChunks:
    """Chat-completion chunks as legacy stream chunks, one stream at a time: text
    offsets of the logprobs run on across chunks. Chunks that carry nothing a legacy
    client reads (the role, an empty delta) are left out; the usage chunk stays."""

    def __init__(self) -> None:
        self._offsets: dict[int, int] = {}

    def convert(self, chunk: Mapping[str, Any]) -> dict[str, Any] | None:
        choices = []
        for position, choice in enumerate(chunk.get("choices") or []):
            index = int(choice.get("index", position))
            text = _text(choice.get("delta") or {})
            offset = self._offsets.get(index, 0)
            logprobs = legacy_logprobs(choice.get("logprobs"), offset)
            self._offsets[index] = offset + len(text)
            finish_reason = choice.get("finish_reason")
            if not text and finish_reason is None and logprobs is None:
                continue
            choices.append(
                {
                    "text": text,
                    "index": index,
                    "logprobs": logprobs,
                    "finish_reason": finish_reason,
                }
            )
        usage = chunk.get("usage")
        if not choices and not usage:
            return None
        converted = _legacy_object(chunk, choices)
        if usage:
            converted["usage"] = usage
        return converted
