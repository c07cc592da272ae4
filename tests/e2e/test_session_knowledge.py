"""The session knowledge cache with the real components, on both storage backends: the
shipped multilingual embedder, the shipped relevance model, tiktoken, the official
`openai` client over HTTP, and what the fake upstream received.

The issue's scenario: three memories about a payment-clearing system; a turn that is
plainly about all three; then "选A，继续", which retrieves nothing by itself and must
still reach the model with that knowledge, and two more turns. With the fused rank
score the best of the three scored 0.40 and the floor was 0.70: nothing was admitted
and the short turn carried nothing.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from gateway.memory.inject import block_lines, is_memory_block
from tests.e2e.helpers import client_for
from tests.helpers import TENANT_KEYS, FakeUpstream, RunningGateway

CLEARING = (
    "Our payment clearing system settles card transactions with the acquiring banks in T+1 batches."
)
CHANNELS = (
    "Bank channel integration: each acquiring bank connects to the clearing system through "
    "its own channel adapter."
)
COMPLIANCE = (
    "Compliance: every settlement batch passes AML and sanctions checks before the clearing "
    "system releases funds."
)
KNOWLEDGE = (CLEARING, CHANNELS, COMPLIANCE)
TOPIC_TURN = (
    "Let's discuss our payment clearing and settlement system: settlement delays, bank "
    "channel integration and compliance."
)
TURNS = (TOPIC_TURN, "选A，继续", "What do the AML checks cover?", "好的，继续")


def _forwarded(upstream: FakeUpstream, system: str, turn: str) -> dict[str, Any]:
    """The last request the upstream received for this conversation ending with `turn`."""
    bodies = [
        body
        for body in upstream.log.chat_bodies
        if body["messages"][0].get("content") == system
        and body["messages"][-1] == {"role": "user", "content": turn}
    ]
    assert bodies, "the upstream never received the turn"
    return bodies[-1]


def _block(body: dict[str, Any]) -> list[str]:
    blocks = [m["content"] for m in body["messages"] if is_memory_block(m)]
    assert len(blocks) <= 1
    return block_lines(blocks[0]) if blocks else []


def _lines_with(lines: list[str], text: str) -> list[str]:
    return [line for line in lines if text in line]


def test_a_short_turn_carries_the_knowledge_the_topic_turn_retrieved(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    user = f"ops-{uuid.uuid4().hex[:8]}"
    written = httpx.post(
        f"{gateway.base_url}/memories",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"user": user, "items": [{"content": text} for text in KNOWLEDGE]},
        timeout=30,
    )
    assert written.status_code == 201, written.text
    found = httpx.post(
        f"{gateway.base_url}/memories/search",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"user": user, "query": TOPIC_TURN, "top_k": 5},
        timeout=30,
    ).json()["data"]
    assert sorted(r["content"] for r in found) == sorted(KNOWLEDGE)
    assert all(0.0 < r["relevance"] < 1.0 for r in found)
    # One system prompt per run: the upstream log is shared by every test of the session.
    system = f"You are the payments team's assistant (run {uuid.uuid4().hex})."
    session = uuid.uuid4().hex
    client = client_for(gateway)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    blocks: list[list[str]] = []
    for turn in TURNS:
        messages.append({"role": "user", "content": turn})
        raw = client.chat.completions.with_raw_response.create(
            model="fake-model",
            messages=messages,  # type: ignore[arg-type]
            extra_headers={"x-gateway-user": user, "x-gateway-session": session},
        )
        answer = raw.parse().choices[0].message.content or ""
        # Never served from the shared cache: every turn carries this user's memory.
        assert raw.headers["x-gateway-cache"] == "bypass"
        blocks.append(_block(_forwarded(upstream, system, turn)))
        messages.append({"role": "assistant", "content": answer})

    topic, short, follow_up, short_again = blocks
    # The topic turn retrieves all three memories itself.
    for text in KNOWLEDGE:
        assert len(_lines_with(topic, text)) == 1
    assert all(line.startswith("- [memory, 20") for line in topic)
    # "选A，继续" matches none of them, yet carries all three from the session cache.
    assert len(short) == 3
    for text in KNOWLEDGE:
        (line,) = _lines_with(short, text)
        assert line.startswith("- [memory, earlier in this session, ")
    # A follow-up about one of them still carries the other two.
    for text in KNOWLEDGE:
        assert len(_lines_with(follow_up, text)) == 1
    assert _lines_with(follow_up, COMPLIANCE)
    # And the next short turn again.
    assert len(short_again) == 3
    assert all(line.startswith("- [memory, earlier in this session, ") for line in short_again)


def test_a_short_turn_in_a_new_session_carries_nothing(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    user = f"ops-{uuid.uuid4().hex[:8]}"
    written = httpx.post(
        f"{gateway.base_url}/memories",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"user": user, "items": [{"content": text} for text in KNOWLEDGE]},
        timeout=30,
    )
    assert written.status_code == 201, written.text
    system = f"You are the payments team's assistant (run {uuid.uuid4().hex})."
    client_for(gateway).chat.completions.create(
        model="fake-model",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": "选A，继续"}],
        extra_headers={"x-gateway-user": user, "x-gateway-session": uuid.uuid4().hex},
    )
    # Nothing from a session: at most this turn's own (weak) retrieval.
    lines = _block(_forwarded(upstream, system, "选A，继续"))
    assert not [line for line in lines if line.startswith("- [memory, earlier in this session, ")]
