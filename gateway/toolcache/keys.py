"""Canonical keys of the tool-result cache.

key = "tc1:" + sha256 hex of the canonical JSON of
`{"arguments", "method", "namespace", "schema_version", "target", "tenant", "tool"}`,
where every string (object keys included) is NFC-normalised, values and the identifying
fields are also trimmed of surrounding whitespace, objects are written with sorted keys
and no insignificant whitespace, and a float that is an integer (within 2**53) is
written as that integer, so `1.0` and `1` are the same argument. Array order, `null`,
booleans and every other value are kept as given: `{"a": null}` is not `{}`, and
`true` is not `1`. The tenant is part of the key: nothing is ever shared across tenants.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from typing import Any

import orjson

KEY_VERSION = "tc1"
# Floats are exact integers up to here; 1e30 stays a float (as an int it would not
# fit the 64 bits orjson encodes).
_EXACT_FLOAT_INT = 2**53


class ArgumentKeysCollide(ValueError):
    """Two keys of one object are the same string once NFC-normalised."""

    def __init__(self, key: str) -> None:
        super().__init__("two argument keys are equal once NFC-normalised")
        self.key = key


def text(value: str) -> str:
    """An identifying string as keys compare it: NFC, trimmed."""
    return unicodedata.normalize("NFC", value).strip()


def canonical_value(value: Any) -> Any:
    """`value` (parsed JSON) in its canonical form (see the module's docstring)."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        if value.is_integer() and abs(value) <= _EXACT_FLOAT_INT:
            return int(value)
        return value
    if isinstance(value, list):
        return [canonical_value(item) for item in value]
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        for key, item in value.items():
            normalised = unicodedata.normalize("NFC", str(key))
            if normalised in result:
                raise ArgumentKeysCollide(normalised)
            result[normalised] = canonical_value(item)
        return result
    raise TypeError(f"not a JSON value: {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """What identifies one tool call's result, as the client named it."""

    tenant: str
    namespace: str
    tool: str
    method: str = ""
    target: str = ""
    arguments: Any = None
    schema_version: str = ""


def canonical_json(call: ToolCall) -> bytes:
    """The bytes the key hashes (also shown by `POST /v1/tool-cache/key`)."""
    document = {
        "arguments": canonical_value(call.arguments),
        "method": text(call.method),
        "namespace": text(call.namespace),
        "schema_version": text(call.schema_version),
        "target": text(call.target),
        "tenant": call.tenant,
        "tool": text(call.tool),
    }
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS)


def tool_cache_key(call: ToolCall) -> str:
    return f"{KEY_VERSION}:{hashlib.sha256(canonical_json(call)).hexdigest()}"
