"""Every field of an answer survives its replay: token logprobs, URL citations
(`annotations`) and refusals, whichever mode stored the entry and whichever mode asks
for it again (issue 15, item 4). The fake upstream answers like OpenAI: logprobs when
asked, `[[cite]]` adds a url_citation, `[[refusal]]` refuses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.helpers import client_for, unique_prompt, upstream_calls
from tests.helpers import FakeUpstream, RunningGateway

MODES = ("json", "stream")
COMBINATIONS = [(store, replay) for store in MODES for replay in MODES]


@dataclass
class Seen:
    """What the openai client saw of one answer, read the same way from either mode."""

    headers: dict[str, str]
    content: str | None
    refusal: str | None
    annotations: list[dict[str, Any]]
    content_logprobs: list[dict[str, Any]]
    refusal_logprobs: list[dict[str, Any]]


def _dump(items: Any) -> list[dict[str, Any]]:
    return [item if isinstance(item, dict) else item.model_dump() for item in items or []]


def _ask(gateway: RunningGateway, prompt: str, mode: str, **extra: Any) -> Seen:
    client = client_for(gateway).chat.completions.with_raw_response
    messages = [{"role": "user", "content": prompt}]
    if mode == "json":
        raw = client.create(model="fake-model", messages=messages, **extra)
        completion = raw.parse()
        choice = completion.choices[0]
        logprobs = choice.logprobs
        return Seen(
            headers=dict(raw.headers),
            content=choice.message.content,
            refusal=choice.message.refusal,
            annotations=_dump(choice.message.annotations),
            content_logprobs=_dump(logprobs.content if logprobs else None),
            refusal_logprobs=_dump(logprobs.refusal if logprobs else None),
        )
    raw = client.create(model="fake-model", messages=messages, stream=True, **extra)
    seen = Seen(dict(raw.headers), None, None, [], [], [])
    for chunk in raw.parse():
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                seen.content = (seen.content or "") + delta.content
            if delta.refusal:
                seen.refusal = (seen.refusal or "") + delta.refusal
            # Not a declared field of the SDK's delta type: read as OpenAI sends it.
            seen.annotations += _dump(getattr(delta, "annotations", None))
            if choice.logprobs is not None:
                seen.content_logprobs += _dump(choice.logprobs.content)
                seen.refusal_logprobs += _dump(choice.logprobs.refusal)
    return seen


def _same_answer(replayed: Seen, original: Seen) -> None:
    assert replayed.content == original.content
    assert replayed.refusal == original.refusal
    assert replayed.annotations == original.annotations
    assert replayed.content_logprobs == original.content_logprobs
    assert replayed.refusal_logprobs == original.refusal_logprobs


@pytest.mark.parametrize(("store", "replay"), COMBINATIONS)
def test_logprobs_and_citations_survive_every_store_and_replay_mode(
    gateway: RunningGateway, upstream: FakeUpstream, store: str, replay: str
) -> None:
    prompt = unique_prompt("Where is the Louvre? [[cite]]")
    original = _ask(gateway, prompt, store, logprobs=True, top_logprobs=2)
    assert original.headers["x-gateway-cache"] == "miss"
    # The provider's answer has what is to be kept: a citation and every token's
    # logprob with two alternatives.
    assert original.annotations[0]["type"] == "url_citation"
    assert original.annotations[0]["url_citation"]["url"] == "https://example.com/source"
    tokens = "".join(token["token"] for token in original.content_logprobs)
    assert tokens == original.content
    assert all(len(token["top_logprobs"]) == 2 for token in original.content_logprobs)

    replayed = _ask(gateway, prompt, replay, logprobs=True, top_logprobs=2)
    assert replayed.headers["x-gateway-cache"] == "exact"
    _same_answer(replayed, original)
    assert upstream_calls(upstream, prompt) == 1


@pytest.mark.parametrize("replay", MODES)
def test_a_refusal_is_replayed_with_its_logprobs(
    gateway: RunningGateway, upstream: FakeUpstream, replay: str
) -> None:
    prompt = unique_prompt("Tell me how to pick a lock [[refusal]]")
    original = _ask(gateway, prompt, "json", logprobs=True, top_logprobs=1)
    assert original.content is None and original.refusal is not None
    assert "".join(token["token"] for token in original.refusal_logprobs) == original.refusal

    replayed = _ask(gateway, prompt, replay, logprobs=True, top_logprobs=1)
    assert replayed.headers["x-gateway-cache"] == "exact"
    _same_answer(replayed, original)
    assert upstream_calls(upstream, prompt) == 1


def test_a_streamed_refusal_that_arrives_empty_is_not_stored(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    """litellm (1.110) drops streamed `delta.refusal` chunks: the gateway receives an
    answer with neither text nor refusal. It must not be stored: the next request, in
    either mode, goes upstream and a JSON one gets the provider's refusal."""
    prompt = unique_prompt("Tell me how to pick a safe [[refusal]]")
    streamed = _ask(gateway, prompt, "stream")
    assert streamed.headers["x-gateway-cache"] == "miss"
    again = _ask(gateway, prompt, "json")
    assert again.headers["x-gateway-cache"] == "miss"
    assert again.refusal is not None
    assert upstream_calls(upstream, prompt) == 2


def test_a_semantic_hit_keeps_the_citation_and_logprobs(gateway: RunningGateway) -> None:
    first = _ask(gateway, "How do I sort a list in Python? [[cite]]", "stream", logprobs=True)
    hit = _ask(gateway, "How can I sort a list in Python? [[cite]]", "json", logprobs=True)
    assert hit.headers["x-gateway-cache"] == "semantic"
    assert first.annotations and first.content_logprobs
    _same_answer(hit, first)
