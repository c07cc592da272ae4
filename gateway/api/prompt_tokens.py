"""The input tokens of a chat body as the gateway would forward it, counted with
tiktoken in the target model's encoding (`gateway/memory/tokens.py`).

An estimate wherever the provider tokenizes differently (Anthropic's models, most
non-OpenAI ones): tiktoken has only OpenAI's encodings, and tool schemas are counted as
their JSON text, which is close to, not equal to, what providers charge for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from gateway.memory.limits import ModelLimits
from gateway.memory.tokens import Tokenizers


class PromptTokens:
    """Built in the app's lifespan from its tokenizers and model limits."""

    def __init__(self, tokenizers: Tokenizers, limits: ModelLimits) -> None:
        self._tokenizers = tokenizers
        self._limits = limits

    def count(self, model: str, body: Mapping[str, Any]) -> int:
        counter = self._tokenizers.for_model(self._limits.tokenizer_model(model))
        messages = body.get("messages")
        total = counter.count_messages(messages if isinstance(messages, list) else [])
        tools = body.get("tools")
        if isinstance(tools, list) and tools:
            total += counter.count(orjson.dumps(tools).decode())
        return total
