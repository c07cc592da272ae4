"""An in-process fake of the gateway's provider: `ChatProvider` and `EmbeddingProvider`
(`gateway.providers.protocol`) without litellm or a network.

For unit tests of what sits on top of the provider (the pipeline, the chat-model
reviewer and judge, the litellm embedder): it answers every chat call with `answer`
(or raises `error`), embeds text with a deterministic vector, and records the bodies
it was sent. Subclass it and override `complete` / `stream` for scripted behaviour; the
other methods then still answer. End-to-end tests use the HTTP fake upstream
(`gateway.testing.fake_upstream`) behind the real litellm provider instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncGenerator, Callable, Collection, Mapping
from typing import Any, Literal

from gateway.providers.protocol import UpstreamReport

# OpenAI's own content part types for a user message.
OPENAI_USER_PART_TYPES = frozenset({"text", "image_url", "input_audio", "file"})

VectorFor = Callable[[str], list[float]]


def hashed_vector(dimensions: int) -> VectorFor:
    """Deterministic, unnormalised vectors: equal texts embed equally."""

    def vector(text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        return [digest[i % len(digest)] / 255.0 + 0.01 for i in range(dimensions)]

    return vector


class FakeProvider:
    """`models`: the model names it knows (None: every name). `reserved`: the request
    parameters it refuses (`RequestRules.reserved_parameter`). `embedding_order`:
    "reversed" lists the embedding items last to first (each keeps its `index`), as an
    upstream may."""

    def __init__(
        self,
        *,
        answer: str | None = "ok",
        error: Exception | None = None,
        models: Collection[str] | None = None,
        vector_for: VectorFor | None = None,
        embedding_order: Literal["request", "reversed"] = "request",
        embed_response: dict[str, Any] | None = None,
        reserved: Collection[str] = (),
        context_windows: Mapping[str, int] | None = None,
        cost_per_token_usd: float = 0.0,
    ) -> None:
        self.answer = answer
        self.error = error
        self._models = None if models is None else frozenset(models)
        self._vector_for = vector_for or hashed_vector(8)
        self._embedding_order = embedding_order
        self._embed_response = embed_response
        self._reserved = frozenset(reserved)
        self._context_windows = dict(context_windows or {})
        self._cost_per_token_usd = cost_per_token_usd
        self.chat_bodies: list[dict[str, Any]] = []
        self.embed_bodies: list[dict[str, Any]] = []
        self.warmed_up = False
        self.closed = False

    # RequestRules

    def reserved_parameter(self, name: str) -> bool:
        return name in self._reserved

    def user_content_part_types(self) -> frozenset[str]:
        return OPENAI_USER_PART_TYPES

    # ChatProvider

    def has_model(self, model: str) -> bool:
        return self._models is None or model in self._models

    async def complete(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> dict[str, Any]:
        self.chat_bodies.append(body)
        if self.error is not None:
            raise self.error
        if report is not None:
            report.model = body["model"]
        return {
            "id": f"chatcmpl-fake-{len(self.chat_bodies)}",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.answer},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    async def stream(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> AsyncGenerator[dict[str, Any], None]:
        self.chat_bodies.append(body)
        if self.error is not None:
            raise self.error
        if report is not None:
            report.model = body["model"]
        deltas: list[tuple[dict[str, Any], str | None]] = [
            ({"role": "assistant", "content": ""}, None),
            ({"content": self.answer or ""}, None),
            ({}, "stop"),
        ]
        for delta, finish in deltas:
            yield {
                "id": f"chatcmpl-fake-{len(self.chat_bodies)}",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": body["model"],
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

    async def warm_up(self) -> None:
        self.warmed_up = True

    def context_window(self, model: str) -> int | None:
        return self._context_windows.get(model)

    def cost_usd(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens + completion_tokens) * self._cost_per_token_usd

    async def close(self) -> None:
        self.closed = True

    # EmbeddingProvider

    async def embed(self, body: dict[str, Any]) -> dict[str, Any]:
        self.embed_bodies.append(body)
        if self.error is not None:
            raise self.error
        if self._embed_response is not None:
            return self._embed_response
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": index, "embedding": self._vector_for(text)}
            for index, text in enumerate(texts)
        ]
        if self._embedding_order == "reversed":
            data.reverse()
        return {"object": "list", "model": body["model"], "data": data}
