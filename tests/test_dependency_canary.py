"""The private parts of litellm and uvicorn the gateway builds on, one line each: an
upgrade that moves or renames one fails here, by name, before any behaviour test does.
The versions are pinned in constraints.txt and bounded in pyproject.toml."""

from __future__ import annotations

import importlib
import inspect

import pytest

LITELLM_SYMBOLS = [
    # api/anthropic_translation.py: the Messages door's translation
    ("litellm.llms.anthropic.messages.adapters.transformation", "LiteLLMAnthropicMessagesAdapter"),
    ("litellm.llms.anthropic.messages.adapters.streaming_iterator", "AnthropicStreamWrapper"),
    ("litellm.types.llms.anthropic", "AnthropicMessagesRequest"),
    ("litellm.types.utils", "ModelResponse"),
    ("litellm.types.utils", "ModelResponseStream"),
    # api/responses_translate.py: the Responses door's translation
    (
        "litellm.responses.litellm_completion_transformation.transformation",
        "LiteLLMCompletionResponsesConfig",
    ),
    # providers/litellm_params.py and providers/as_sent.py: what litellm reserves
    ("litellm.types.utils", "all_litellm_params"),
    ("litellm.types.llms.openai", "ValidUserMessageContentTypes"),
    ("litellm.constants", "DEFAULT_CHAT_COMPLETION_PARAM_VALUES"),
]

# http_protocol.py subclasses uvicorn's httptools protocol and calls these.
UVICORN_PROTOCOL_METHODS = [
    "connection_made",
    "connection_lost",
    "data_received",
    "on_message_begin",
    "on_headers_complete",
    "on_message_complete",
    "handle_websocket_upgrade",
    "_should_upgrade",
    "_unset_keepalive_if_required",
    "_unsupported_upgrade_warning",
]
# ...and reads these attributes its __init__ or its callbacks set.
UVICORN_PROTOCOL_ATTRIBUTES = ["parser", "transport", "cycle", "url", "headers", "tasks", "loop"]


@pytest.mark.parametrize(("module", "name"), LITELLM_SYMBOLS)
def test_litellm_still_has(module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name), f"{module}.{name} is gone"


def test_uvicorn_httptools_protocol_still_has_what_the_gateway_overrides() -> None:
    from uvicorn.config import Config  # noqa: F401
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
    from uvicorn.server import ServerState  # noqa: F401

    assert STATUS_LINE
    for name in UVICORN_PROTOCOL_METHODS:
        assert callable(getattr(HttpToolsProtocol, name, None)), f"HttpToolsProtocol.{name}"
    source = inspect.getsource(HttpToolsProtocol)
    for name in UVICORN_PROTOCOL_ATTRIBUTES:
        assert f"self.{name} =" in source, f"HttpToolsProtocol no longer sets self.{name}"


def test_the_imported_native_parts_are_installed() -> None:
    # Imported directly (http_protocol.py, storage/redis/pipelined.py), so declared too.
    importlib.import_module("httptools")
    importlib.import_module("hiredis")
