"""Canonical keys of the tool-result cache: equal for the same call however it is
spelt, different for anything that could change the result."""

from __future__ import annotations

import orjson
import pytest

from gateway.toolcache.keys import ArgumentKeysCollide, ToolCall, canonical_json, tool_cache_key


def _key(arguments: object, **fields: str) -> str:
    call = {"tenant": "acme", "namespace": "", "tool": "search", "target": "docs-index"}
    call.update(fields)
    return tool_cache_key(ToolCall(arguments=arguments, **call))


def _parsed(text: str) -> object:
    return orjson.loads(text)


def test_argument_order_and_whitespace_do_not_matter() -> None:
    one = _parsed('{"query": "refund", "limit": 10, "filters": {"lang": "en", "year": 2024}}')
    other = _parsed('{ "filters" : {"year":2024,"lang":"en"},\n "limit":10, "query":"refund" }')
    assert _key(one) == _key(other)


def test_integral_floats_equal_integers() -> None:
    assert _key(_parsed('{"limit": 1}')) == _key(_parsed('{"limit": 1.0}'))
    assert _key(_parsed('{"ids": [2, 3.0]}')) == _key(_parsed('{"ids": [2.0, 3]}'))
    assert _key(_parsed('{"limit": 1}')) != _key(_parsed('{"limit": 1.5}'))


def test_strings_are_nfc_and_trimmed() -> None:
    decomposed = {"city": "Zu\u0308rich  "}  # u + combining diaeresis, trailing spaces
    composed = {"city": "Z\u00fcrich"}
    assert _key(decomposed) == _key(composed)
    assert _key({}, tool=" search ", target="docs-index\n") == _key({})


def test_different_values_give_different_keys() -> None:
    base = _key({"query": "refund policy", "limit": 10})
    assert base != _key({"query": "refund policies", "limit": 10})
    assert base != _key({"query": "refund policy", "limit": 11})
    assert base != _key({"query": "refund policy", "limit": 10, "page": 2})
    assert base != _key({"query": "refund policy", "limit": "10"})  # a string is not a number
    assert _key({"flag": True}) != _key({"flag": 1})
    assert _key({"a": None}) != _key({})
    assert _key([1, 2]) != _key([2, 1])  # array order is kept


def test_every_identifying_field_is_in_the_key() -> None:
    base = _key({"q": "x"})
    assert base != _key({"q": "x"}, schema_version="2")
    assert base != _key({"q": "x"}, tool="fetch")
    assert base != _key({"q": "x"}, method="GET")
    assert base != _key({"q": "x"}, target="other-index")
    assert base != _key({"q": "x"}, namespace="agent-b")
    assert base != _key({"q": "x"}, tenant="globex")


def test_canonical_form_is_documented_json() -> None:
    call = ToolCall(tenant="acme", namespace="", tool="search", arguments={"b": 1.0, "a": " x "})
    assert canonical_json(call) == (
        b'{"arguments":{"a":"x","b":1},"method":"","namespace":"","schema_version":"",'
        b'"target":"","tenant":"acme","tool":"search"}'
    )
    assert tool_cache_key(call).startswith("tc1:")


def test_keys_equal_after_nfc_are_refused() -> None:
    with pytest.raises(ArgumentKeysCollide):
        canonical_json(
            ToolCall(tenant="acme", namespace="", tool="t", arguments={"e\u0301": 1, "\u00e9": 2})
        )
