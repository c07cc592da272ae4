"""Token counting with tiktoken, offline.

Memory is injected into chat requests under a token budget counted in the target model's
encoding. tiktoken normally downloads its BPE files on first use; this machine (and the
gateway's deployments) may have no internet, so the loader points ``TIKTOKEN_CACHE_DIR`` at the
copies that litellm ships (``cl100k_base``, ``o200k_base``, ``p50k_base``) when the variable is
unset. litellm is located with ``importlib.util.find_spec`` and never imported here: only
``gateway/providers/`` may import it.

Nothing happens at import time. The app makes one :class:`Tokenizers` in its lifespan and
shares it; it caches one :class:`TokenCounter` per encoding.

Each counter remembers the counts of the short texts it counted last
(:data:`COUNT_MEMO_ENTRIES`): the memory block is assembled from the same memory lines,
headers and conversation turns turn after turn, and encoding them again was most of the
block's cost (docs/measurements.md, "Memory work per miss").
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from pathlib import Path
from typing import Any

import tiktoken

from gateway.bounded_lru import BoundedLRU
from gateway.errors import GatewayInternalError

__all__ = ["TokenCounter", "TokenizerUnavailable", "Tokenizers"]

logger = logging.getLogger(__name__)

_CACHE_ENV = "TIKTOKEN_CACHE_DIR"
# OpenAI's accounting for chat prompts (gpt-3.5-turbo-0613 and later, gpt-4, gpt-4o).
_TOKENS_PER_MESSAGE = 3
_TOKENS_PER_NAME = 1
_REPLY_PRIMING = 3
# Texts remembered per counter, each at most `COUNT_MEMO_MAX_CHARS` long: about 2 MiB at
# most. Longer texts (documents, tool results) are rare repeats and are counted each time.
COUNT_MEMO_ENTRIES = 8192
COUNT_MEMO_MAX_CHARS = 1024


class TokenizerUnavailable(GatewayInternalError, RuntimeError):
    """No tiktoken encoding could be loaded without the network."""


def _litellm_tokenizers_dir() -> Path | None:
    """litellm's bundled tiktoken cache folder, found without importing litellm."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "litellm_core_utils" / "tokenizers"
        if folder.is_dir():
            return folder
    return None


def _ensure_cache_dir() -> None:
    """Point tiktoken at litellm's bundled files, unless the user chose a cache folder."""
    if _CACHE_ENV in os.environ:
        return
    folder = _litellm_tokenizers_dir()
    if folder is not None:
        os.environ.setdefault(_CACHE_ENV, str(folder))


def _load_encoding(name: str) -> tiktoken.Encoding:
    """Loads an encoding offline; raises TokenizerUnavailable with a fix when it cannot."""
    if name not in tiktoken.list_encoding_names():
        raise ValueError(
            f"unknown tiktoken encoding {name!r}; known: {sorted(tiktoken.list_encoding_names())}"
        )
    _ensure_cache_dir()
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:
        bundled = _litellm_tokenizers_dir()
        hint = (
            f"litellm ships cl100k_base, o200k_base and p50k_base in {bundled}"
            if bundled is not None
            else "litellm's bundled copies were not found"
        )
        raise TokenizerUnavailable(
            f"cannot load the tiktoken encoding {name!r} without the network "
            f"({type(exc).__name__}: {exc}). Set {_CACHE_ENV} to a folder holding tiktoken's "
            f"cached BPE files (currently {os.environ.get(_CACHE_ENV)!r}); {hint}."
        ) from exc


class TokenCounter:
    """Counts tokens with one tiktoken encoding; the counts of short texts are remembered
    (a bounded LRU: the same text always has the same count)."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self._encoding = encoding
        self.encoding_name: str = encoding.name
        self._counts: BoundedLRU[str, int] = BoundedLRU(COUNT_MEMO_ENTRIES)
        # Counted on the event loop and in worker threads (knowledge chunking).
        self._counts_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TokenCounter({self.encoding_name!r})"

    def _encode(self, text: str) -> list[int]:
        # User text may contain strings such as "<|endoftext|>": count them as plain text.
        return self._encoding.encode_ordinary(text)

    def count(self, text: str) -> int:
        if len(text) > COUNT_MEMO_MAX_CHARS:
            return len(self._encode(text))
        with self._counts_lock:
            known = self._counts.get(text)
        if known is not None:
            return known
        counted = len(self._encode(text))
        with self._counts_lock:
            self._counts.put(text, counted)
        return counted

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        """Prompt tokens of a chat request's messages, OpenAI's accounting: per message
        3 tokens + tokens of each string field (role, content, name); content may be a string or
        a list of parts (count the text parts; ignore images); tool_calls count their
        function name+arguments; plus 3 for the reply priming.

        As in OpenAI's cookbook, a ``name`` field costs one extra token. The legacy
        ``function_call`` field counts like one tool call.
        """
        total = _REPLY_PRIMING
        for message in messages:
            total += _TOKENS_PER_MESSAGE
            role = message.get("role")
            if isinstance(role, str):
                total += self.count(role)
            name = message.get("name")
            if isinstance(name, str):
                total += self.count(name) + _TOKENS_PER_NAME
            total += self._count_content(message.get("content"))
            tool_calls = message.get("tool_calls")
            if isinstance(tool_calls, list):
                for call in tool_calls:
                    if isinstance(call, dict):
                        total += self._count_function(call.get("function"))
            total += self._count_function(message.get("function_call"))
        return total

    def _count_content(self, content: Any) -> int:
        if isinstance(content, str):
            return self.count(content)
        if not isinstance(content, list):
            return 0
        total = 0
        for part in content:
            if isinstance(part, str):
                total += self.count(part)
            elif isinstance(part, dict) and part.get("type", "text") == "text":
                text = part.get("text")
                if isinstance(text, str):
                    total += self.count(text)
        return total

    def _count_function(self, function: Any) -> int:
        if not isinstance(function, dict):
            return 0
        total = 0
        for key in ("name", "arguments"):
            value = function.get(key)
            if isinstance(value, str):
                total += self.count(value)
        return total

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of text with at most max_tokens tokens (decode of the first
        max_tokens tokens; never cut inside a multi-byte character: drop a trailing
        replacement char)."""
        if max_tokens <= 0:
            return ""
        tokens = self._encode(text)
        if len(tokens) <= max_tokens:
            return text
        keep = max_tokens
        while keep > 0:
            # The first tokens' bytes are a prefix of text's UTF-8 bytes; only a character cut
            # at the end can be incomplete, and "ignore" drops exactly that.
            prefix = self._encoding.decode_bytes(tokens[:keep]).decode("utf-8", errors="ignore")
            # BPE is not prefix-stable: re-encoding the prefix may in rare cases take more
            # tokens than were kept, so check and shorten until it fits.
            overshoot = self.count(prefix) - max_tokens
            if overshoot <= 0:
                return prefix
            keep -= overshoot
        return ""


class Tokenizers:
    """Made once by the app (in its lifespan) and shared; caches one TokenCounter per encoding."""

    def __init__(self, default_encoding: str = "cl100k_base") -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, TokenCounter] = {}
        self._unavailable: set[str] = set()
        # Loaded now so that start-up fails loudly when offline loading is broken.
        self._default = self._counter(default_encoding)

    def _counter(self, encoding_name: str) -> TokenCounter:
        counter = self._counters.get(encoding_name)
        if counter is not None:
            return counter
        with self._lock:
            counter = self._counters.get(encoding_name)
            if counter is None:
                counter = TokenCounter(_load_encoding(encoding_name))
                self._counters[encoding_name] = counter
            return counter

    def for_model(self, model: str) -> TokenCounter:
        """`model` is a litellm model string such as "openai/gpt-4o-mini", "gpt-4o",
        "azure/gpt-4", "anthropic/claude-3-5-sonnet" or an unknown name: strip a provider prefix
        before "/", ask `tiktoken.encoding_name_for_model`; unknown models get the default
        encoding. Never raises for an unknown model.

        A known model whose encoding cannot be loaded offline (say ``r50k_base``) also gets
        the default encoding, with one warning per encoding.
        """
        encoding_name = _encoding_name_for_model(model)
        if encoding_name is None or encoding_name in self._unavailable:
            return self._default
        try:
            return self._counter(encoding_name)
        except (TokenizerUnavailable, ValueError) as exc:
            self._unavailable.add(encoding_name)
            logger.warning(
                "model %r uses %s, which cannot be loaded (%s); counting with %s instead",
                model,
                encoding_name,
                exc,
                self._default.encoding_name,
            )
            return self._default


def _encoding_name_for_model(model: str) -> str | None:
    """tiktoken's encoding for a litellm model string, or None when tiktoken does not know it."""
    bare = model.strip().rsplit("/", 1)[-1]
    for candidate in dict.fromkeys((bare, bare.lower())):
        if not candidate:
            continue
        try:
            return tiktoken.encoding_name_for_model(candidate)
        except KeyError:
            continue
    return None
