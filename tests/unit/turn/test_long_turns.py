"""Long turns: cleaned in slices with the same result as in one piece, and split in a
worker thread before classification, with the same result as in place."""

from __future__ import annotations

import asyncio
import random

import pytest

from gateway.auth import Principal
from gateway.pipeline.request import TURN_IN_THREAD_ABOVE_CHARS, ChatRequest
from gateway.policy.models import Policy
from gateway.turn import last_user_turn_chars, parse_last_user_turn
from gateway.turn.split import _clean_ask

SPACES = [" ", "  ", "\n", "\t", "\u3000", "\u2028", "\x1c", "\r\n", "\u00a0"]


@pytest.mark.parametrize("seed", range(20))
def test_slices_clean_like_one_piece(seed: int) -> None:
    rng = random.Random(seed)
    words = []
    while sum(map(len, words)) < rng.randrange(70_000, 300_000):
        word = "".join(rng.choices("abcdéf中文", k=rng.randrange(1, 20)))
        if rng.random() < 0.001:
            word *= 10_000  # a word longer than a slice
        words.append(word + "".join(rng.choices(SPACES, k=rng.randrange(1, 4))))
    text = "".join(rng.choices(SPACES, k=3)) + "".join(words)
    assert _clean_ask(text) == " ".join(text.split())


def test_one_word_longer_than_a_slice() -> None:
    text = "  " + "x" * 200_000 + "  y "
    assert _clean_ask(text) == " ".join(text.split())


def _context(content: object) -> ChatRequest:
    messages = [{"role": "user", "content": content}]
    return ChatRequest(
        request_id="r",
        principal=Principal("acme"),
        model="m",
        body={"model": "m", "messages": messages},
        policy=Policy(),
    )


def test_a_long_turn_is_split_before_classification_as_in_place() -> None:
    text = "Please summarise the following notes. " + "notes about cedar and maple " * 5_000
    assert len(text) > TURN_IN_THREAD_ABOVE_CHARS
    ctx = _context(text)
    asyncio.run(ctx.prepare_turn())
    assert ctx.turn_if_parsed is not None
    expected = parse_last_user_turn(ctx.body["messages"], Policy().semantic_cache.max_query_chars)
    assert ctx.turn_if_parsed == expected
    assert ctx.turn is ctx.turn_if_parsed


def test_a_short_turn_is_left_for_later() -> None:
    ctx = _context("What is the capital of France?")
    asyncio.run(ctx.prepare_turn())
    assert ctx.turn_if_parsed is None
    assert ctx.turn.ask == "What is the capital of France?"


def test_turn_size_counts_string_parts() -> None:
    parts = [{"type": "text", "text": "abc"}, {"type": "image_url", "image_url": {"url": "u"}}]
    assert last_user_turn_chars([{"role": "user", "content": parts}]) == len("text") + 3 + len(
        "image_url"
    )
    assert last_user_turn_chars([{"role": "user", "content": "abcd"}]) == 4
    assert last_user_turn_chars([{"role": "assistant", "content": "abcd"}]) == 0
