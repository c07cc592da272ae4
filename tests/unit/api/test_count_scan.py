"""The token walk that proves a chat body over its message or part limit agrees with the
parsed body on every body it answers for, and finds every sane body over a limit."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from gateway.api.body_parsing import BodyLimits, BodyParser
from gateway.api.count_scan import count_literal, exceeded_limit, may_exceed
from gateway.errors import InvalidRequest
from gateway.testing.fake_provider import FakeProvider

TRICKY_TEXTS = (
    "plain",
    '"role"',
    '{"role": "user"}, [',
    "a, b, c ] } {",
    "back\\slash\\",
    'quote " inside',
    '\\"',
    "unicode é 中文 \u2028",
    "",
)


def _content(rng: random.Random) -> Any:
    choice = rng.random()
    if choice < 0.4:
        return rng.choice(TRICKY_TEXTS)
    if choice < 0.5:
        return None
    parts: list[Any] = []
    for _ in range(rng.randrange(0, 6)):
        if rng.random() < 0.8:
            parts.append({"type": "text", "text": rng.choice(TRICKY_TEXTS)})
        else:
            parts.append(rng.choice([5, "s", None, [1, [2]], {"type": "image_url"}]))
    return parts


def _body(rng: random.Random, messages: int) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m"}
    if rng.random() < 0.5:
        body["metadata"] = {"messages": [{"content": [1, 2, 3]}] * 3, "x": '"messages"'}
    body["messages"] = [
        {
            "role": rng.choice(["user", "assistant", "role"]),
            "content": _content(rng),
            **({"name": '"content"'} if rng.random() < 0.2 else {}),
        }
        for _ in range(messages)
    ]
    if rng.random() < 0.3:
        body["tools"] = [{"content": ["a", "b"]}]
    return body


def _truth(body: dict[str, Any]) -> tuple[int, int]:
    messages = body["messages"]
    parts = sum(len(m["content"]) for m in messages if isinstance(m.get("content"), list))
    return len(messages), parts


@pytest.mark.parametrize("seed", range(300))
def test_the_walk_agrees_with_the_parsed_body(seed: int) -> None:
    rng = random.Random(seed)
    body = _body(rng, rng.randrange(1, 40))
    indent = rng.choice([None, 0, 2])
    separators = rng.choice([(",", ":"), (", ", ": "), (" ,\n", " :\t")])
    raw = json.dumps(body, indent=indent, separators=separators, ensure_ascii=rng.random() < 0.5)
    messages, parts = _truth(body)
    max_messages = rng.randrange(1, 45)
    max_parts = rng.randrange(0, 60)
    found = exceeded_limit(raw.encode(), max_messages, max(max_parts, 1))
    expected = (
        "messages"
        if messages > max_messages
        else "content_parts"
        if parts > max(max_parts, 1)
        else None
    )
    # Messages are found first when both are over (the walk meets them in order); a
    # parts limit may be met before the message that goes over the messages limit.
    if expected == "messages":
        assert found in ("messages", "content_parts")
        if found == "content_parts":
            assert parts > max(max_parts, 1)
    else:
        assert found == expected


def test_the_walk_stops_at_the_limit_without_reading_the_rest() -> None:
    """Over the limit, then not JSON at all: the walk has proven its point before."""
    head = '{"model": "m", "messages": [' + ", ".join(['{"role": "user"}'] * 11)
    assert exceeded_limit((head + ", {{{ not json").encode(), 10, 100) == "messages"
    assert exceeded_limit((head + "]}").encode(), 11, 100) is None


def test_bodies_it_cannot_follow_are_left_to_the_parser() -> None:
    assert exceeded_limit(b"[1, 2, 3]", 1, 1) is None
    assert exceeded_limit(b"}}}", 1, 1) is None
    assert exceeded_limit(b'{"a": 1}, 2, 3', 1, 1) is None
    # A key spelled with an escape is not followed (the full parse counts it).
    escaped = '{"\\u006dessages": [' + ", ".join(['{"role": "user"}'] * 5) + "]}"
    assert exceeded_limit(escaped.encode(), 2, 100) is None


def test_literal_counts_across_slices() -> None:
    token = b'"role"'
    raw = (b"x" * 262_141 + token) * 7 + token
    assert count_literal(raw, token) == raw.count(token) == 8
    assert may_exceed(raw, 7, 100) and not may_exceed(raw, 8, 100)


def test_the_parser_refuses_an_oversized_body_from_the_walk_alone() -> None:
    """60,000 messages and then garbage: refused for its count (a full parse would have
    called it invalid JSON), so the body was never parsed."""
    limits = BodyLimits(max_messages=10_000, max_content_parts=10_000, offload_above_bytes=1024)
    raw = (
        '{"model": "m", "messages": ['
        + ", ".join(f'{{"role": "user", "content": "m{i}"}}' for i in range(60_000))
        + ", {{{"
    ).encode()
    with pytest.raises(InvalidRequest) as refused:
        asyncio.run(BodyParser(limits, FakeProvider()).parse_chat(raw))
    assert refused.value.code == "array_above_max_length"
    assert refused.value.param == "messages"
