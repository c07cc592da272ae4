"""Knowledge and the cache over HTTP, on both storage backends: an answer given with
tenant knowledge alone is shared (exact for the same question, semantic for a
paraphrase) while the injected items stay the same, and never after one of them was
replaced or deleted, never across tenants, never when a user memory was injected too,
and never with `knowledge.cache_answers: false`. A request without a user gets the
tenant's knowledge."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from gateway.memory.inject import is_memory_block
from tests.e2e.helpers import client_for, gateway_with_policies
from tests.helpers import ADMIN_KEY, TENANT_KEYS, FakeUpstream, GatewayFactory, RunningGateway

_NAMES = ("Heron", "Falcon", "Otter", "Badger", "Lynx", "Sparrow", "Marten", "Ibis")


def _plan() -> str:
    # Plain words: a hex token would (rightly) make the classifier see an ID.
    return " ".join(random.sample(_NAMES, k=2))


def _knowledge(gateway: RunningGateway, method: str, path: str = "", **kwargs: Any) -> Any:
    response = httpx.request(
        method,
        f"{gateway.base_url}/knowledge{path}",
        headers={"authorization": f"Bearer {ADMIN_KEY}", "x-gateway-tenant": "acme"},
        timeout=30,
        **kwargs,
    )
    assert response.status_code in (200, 201), response.text
    return response.json()


def _ask(
    gateway: RunningGateway, question: str, tenant: str = "acme", user: str | None = None
) -> tuple[str, str, str]:
    """(x-gateway-cache, its reason, the answer) for `question`."""
    headers = {} if user is None else {"x-gateway-user": user}
    raw = client_for(gateway, tenant).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[{"role": "user", "content": question}],
        extra_headers=headers,
    )
    answer = raw.parse().choices[0].message.content or ""
    return raw.headers["x-gateway-cache"], raw.headers.get("x-gateway-cache-reason", ""), answer


def _block_sent(upstream: FakeUpstream, question: str) -> str:
    """The memory block the upstream last received with `question`."""
    bodies = [
        body
        for body in upstream.log.chat_bodies
        if any(str(m.get("content")) == question for m in body["messages"])
    ]
    assert bodies, "the upstream never received the request"
    blocks = [str(m["content"]) for m in bodies[-1]["messages"] if is_memory_block(m)]
    return blocks[0] if blocks else ""


def test_a_knowledge_answer_is_shared_while_its_items_stay_the_same(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    plan = _plan()
    fact = f"Refunds for the {plan} plan are paid back within nine working days."
    document_id = f"refunds-{plan.replace(' ', '-').lower()}"
    _knowledge(gateway, "POST", json={"content": fact, "document_id": document_id})
    question = f"How long do refunds for the {plan} plan take?"

    # No user named: the tenant's knowledge is injected all the same.
    layer, _, first = _ask(gateway, question)
    assert layer == "miss"
    assert fact in _block_sent(upstream, question)
    # The same question with the same knowledge: the same answer, from the cache.
    assert _ask(gateway, question)[::2] == ("exact", first)
    # A user with no memories of their own is given the same knowledge only.
    assert _ask(gateway, question, user="bob")[::2] == ("exact", first)
    paraphrase = f"How long does a refund for the {plan} plan take?"
    assert _ask(gateway, paraphrase)[::2] == ("semantic", first)
    # Another tenant has no such knowledge: never the first tenant's answer.
    other_layer, _, other = _ask(gateway, question, tenant="globex")
    assert other_layer == "miss" and other != first

    # The document replaced: the next answer is written with the new text.
    new_fact = f"Refunds for the {plan} plan are paid back within three working days."
    _knowledge(gateway, "POST", json={"content": new_fact, "document_id": document_id})
    layer, _, after_replace = _ask(gateway, question)
    assert layer == "miss" and after_replace != first
    block = _block_sent(upstream, question)
    assert new_fact in block and fact not in block
    assert _ask(gateway, paraphrase)[2] != first

    # The item deleted: neither answer written with it is served again.
    item_id = _knowledge(gateway, "GET", params={"document_id": document_id})["data"][0]["id"]
    _knowledge(gateway, "DELETE", f"/{item_id}")
    layer, _, after_delete = _ask(gateway, question)
    assert layer == "miss" and after_delete not in (first, after_replace)
    assert new_fact not in _block_sent(upstream, question)


def test_an_injected_user_memory_keeps_the_answer_out_of_the_shared_cache(
    gateway: RunningGateway,
) -> None:
    plan = _plan()
    _knowledge(
        gateway,
        "POST",
        json={"content": f"The {plan} plan includes priority support by phone."},
    )
    stored = httpx.post(
        f"{gateway.base_url}/memories",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"user": "alice", "content": f"Alice is on the {plan} plan and prefers email."},
        timeout=30,
    )
    assert stored.status_code == 201, stored.text
    question = f"Does the {plan} plan include priority support?"
    assert _ask(gateway, question, user="alice")[:2] == ("bypass", "memory_personalized")
    assert _ask(gateway, question, user="alice")[:2] == ("bypass", "memory_personalized")
    # Knowledge alone (no user): cacheable, and never Alice's answer.
    layer, _, shared = _ask(gateway, question)
    assert layer == "miss"
    assert _ask(gateway, question)[::2] == ("exact", shared)


def test_cache_answers_false_keeps_every_knowledge_answer_out_of_the_cache(
    start_gateway: GatewayFactory, tmp_path: Path, upstream: FakeUpstream
) -> None:
    gateway, _ = gateway_with_policies(
        start_gateway, tmp_path, {"default.yaml": "knowledge:\n  cache_answers: false\n"}
    )
    plan = _plan()
    fact = f"The {plan} plan allows fifty projects per workspace."
    _knowledge(gateway, "POST", json={"items": [{"content": fact}]})
    question = f"How many projects does the {plan} plan allow?"
    for _ in range(2):
        assert _ask(gateway, question)[:2] == ("bypass", "memory_personalized")
    assert fact in _block_sent(upstream, question)


def test_concurrent_identical_requests_with_the_same_knowledge_share_one_call(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    plan = _plan()
    fact = f"The {plan} plan includes a dedicated onboarding call."
    _knowledge(gateway, "POST", json={"items": [{"content": fact}]})
    question = f"Does the {plan} plan include an onboarding call? [[sleep:0.5]]"
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: _ask(gateway, question), range(4)))
    assert len({answer for _, _, answer in results}) == 1
    asked = [
        b
        for b in upstream.log.chat_bodies
        if any(m.get("content") == question for m in b["messages"])
    ]
    # One upstream call (the leader's, knowledge included); the others waited for it.
    assert len(asked) == 1 and fact in _block_sent(upstream, question)
