"""Canonical cache keys: the exact key and the semantic compatibility fingerprint.

key = sha256(canonical JSON, sorted keys) of tenant, cache namespace (policy and
declared versions), model, every request parameter that can change the answer, and the
normalised message list. Parameters are included by default (unknown ones too): only
fields known NOT to affect the generated text are left out, so a new OpenAI parameter
can never make two different answers share a key.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Mapping
from typing import Any

import orjson

from gateway.turn import ParsedTurn

# Fields that never change the generated answer: transport and bookkeeping.
ANSWER_NEUTRAL_FIELDS = frozenset(
    {
        "model",  # keyed separately
        "messages",  # normalised separately
        "stream",
        "stream_options",
        "user",
        "metadata",
        "store",
        "service_tier",
        "prompt_cache_key",
        "safety_identifier",
    }
)


_EXACT_FLOAT_INT = 2**53


def _normalise_number(value: Any) -> Any:
    # 1 and 1.0 mean the same temperature; JSON would spell them differently. Only
    # within the range where floats are exact integers: 1e30 stays a float (as an int
    # it would not even fit the 64 bits orjson encodes).
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT_FLOAT_INT:
        return int(value)
    if isinstance(value, dict):
        return {k: _normalise_number(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise_number(v) for v in value]
    return value


def _nfc_stripped(text: str) -> str:
    # NFC changes no character's meaning; spaces and line breaks around a message are
    # not content, tabs are (a pasted TSV row's empty last column).
    return unicodedata.normalize("NFC", text).strip(" \n\r")


def normalise_content(content: Any) -> Any:
    """A string, or a single text part, becomes one stripped NFC string."""
    if isinstance(content, str):
        return _nfc_stripped(content)
    if isinstance(content, list):
        if (
            len(content) == 1
            and isinstance(content[0], dict)
            and content[0].get("type") == "text"
            and isinstance(content[0].get("text"), str)
        ):
            return _nfc_stripped(content[0]["text"])
        return [
            {**part, "text": _nfc_stripped(part["text"])}
            if isinstance(part, dict) and isinstance(part.get("text"), str)
            else part
            for part in content
        ]
    return content


def normalise_messages(messages: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    normalised = []
    for message in messages:
        item = {k: v for k, v in message.items() if v is not None}
        if "content" in item:
            item["content"] = normalise_content(item["content"])
        normalised.append(item)
    return normalised


def answer_parameters(body: Mapping[str, Any]) -> dict[str, Any]:
    """Every request field that may change the answer, numbers normalised."""
    return {
        k: _normalise_number(v)
        for k, v in body.items()
        if k not in ANSWER_NEUTRAL_FIELDS and v is not None
    }


def _digest(document: Mapping[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest()


def exact_cache_key(
    *, tenant: str, namespace: Mapping[str, str], model: str, body: Mapping[str, Any]
) -> str:
    return _digest(
        {
            "tenant": tenant,
            "namespace": dict(namespace),
            "model": model,
            "params": answer_parameters(body),
            "messages": normalise_messages(body.get("messages") or []),
        }
    )


def compatibility_fingerprint(
    *,
    tenant: str,
    namespace: Mapping[str, str],
    model: str,
    body: Mapping[str, Any],
    turn: ParsedTurn,
) -> str:
    """Everything but the ask: only requests that agree on all of it (tenant, model,
    parameters, system prompt, tools, earlier turns, and in the last user turn the
    material it carries and its attachments) may share a semantic answer. Messages after
    the last user turn (rare) stay in, the last user turn included as a slot."""
    messages = normalise_messages(body.get("messages") or [])
    if turn.index is not None and turn.index < len(messages):
        messages[turn.index] = {
            **messages[turn.index],
            "content": {
                "material": list(turn.material),
                "attachments": list(turn.attachment_digests),
            },
        }
    return _digest(
        {
            "kind": "semantic-fingerprint-v2",
            "tenant": tenant,
            "namespace": dict(namespace),
            "model": model,
            "params": answer_parameters(body),
            "messages": messages,
        }
    )
