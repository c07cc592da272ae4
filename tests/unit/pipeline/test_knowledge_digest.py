"""The knowledge digest: which injections may be shared, and the keys it gives."""

from __future__ import annotations

from gateway.auth import Principal
from gateway.knowledge.records import KNOWLEDGE_SOURCE
from gateway.memory.session import MemoryCandidate, Origin
from gateway.pipeline.knowledge_digest import for_sharing, knowledge_digest, shareable_digest
from gateway.pipeline.request import ChatRequest
from gateway.policy.models import Policy


def _item(item_id: str, content: str, source: str = KNOWLEDGE_SOURCE) -> MemoryCandidate:
    return MemoryCandidate(
        key=content.lower(),
        content=content,
        score=0.5,
        origin=Origin.THIS_TURN,
        memory_id=item_id,
        created_at=1.0,
        source=source,
    )


def _fields(item: MemoryCandidate) -> dict[str, object]:
    return {name: getattr(item, name) for name in MemoryCandidate.__dataclass_fields__}


PRO = _item("k1", "The Pro tier allows 50 projects.")
ENTERPRISE = _item("k2", "The Enterprise tier allows unlimited projects.")


def test_the_digest_names_the_items_their_content_and_their_order() -> None:
    digest = knowledge_digest([PRO, ENTERPRISE])
    assert digest == knowledge_digest([PRO, ENTERPRISE])
    assert digest != knowledge_digest([ENTERPRISE, PRO])
    assert digest != knowledge_digest([PRO])
    # The same item with its content updated, and the same text under a new id
    # (a replaced document), are other knowledge.
    assert digest != knowledge_digest([_item("k1", "The Pro tier allows 80 projects."), ENTERPRISE])
    assert digest != knowledge_digest([_item("k9", PRO.content), ENTERPRISE])
    # The same item from a session's cache is labelled otherwise in the block.
    from_session = MemoryCandidate(**{**_fields(PRO), "origin": Origin.SESSION})
    assert knowledge_digest([from_session, ENTERPRISE]) != digest
    # No two lists spell the same bytes.
    assert knowledge_digest([_item("ab", "c")]) != knowledge_digest([_item("a", "bc")])


def test_only_a_knowledge_only_injection_is_shareable() -> None:
    assert shareable_digest([PRO, ENTERPRISE], task_tokens=0) == knowledge_digest([PRO, ENTERPRISE])
    memory = _item("m1", "Alice is allergic to penicillin.", source="memory")
    assert shareable_digest([PRO, memory], task_tokens=0) is None
    assert shareable_digest([PRO], task_tokens=12) is None
    assert shareable_digest([], task_tokens=0) is None


def _request() -> ChatRequest:
    return ChatRequest(
        request_id="r1",
        principal=Principal("acme"),
        model="fake-model",
        body={"model": "fake-model", "messages": [{"role": "user", "content": "Pro limits?"}]},
        policy=Policy(),
    )


def test_the_digest_gives_the_request_keys_of_its_own() -> None:
    plain = _request()
    with_pro = plain.with_knowledge(knowledge_digest([PRO]))
    with_both = plain.with_knowledge(knowledge_digest([PRO, ENTERPRISE]))
    assert len({plain.exact_key, with_pro.exact_key, with_both.exact_key}) == 3
    assert len({plain.fingerprint, with_pro.fingerprint, with_both.fingerprint}) == 3
    assert with_pro.exact_key == _request().with_knowledge(knowledge_digest([PRO])).exact_key
    # A request without knowledge keeps the keys it had before digests existed.
    assert "knowledge" not in plain.cache_namespace()
    assert with_pro.cache_namespace()["knowledge"] == knowledge_digest([PRO])
    assert with_pro.started_at == plain.started_at and with_pro.turn == plain.turn


def test_a_knowledge_only_injection_is_cut_to_the_best_items() -> None:
    third = _item("k3", "The Free tier allows 3 projects.")
    assert for_sharing([PRO, ENTERPRISE, third], top_n=2) == [PRO, ENTERPRISE]
    # With a memory among them the answer is not shared: nothing is cut.
    memory = _item("m1", "Alice is on the Pro tier.", source="memory")
    assert for_sharing([PRO, memory, third], top_n=1) == [PRO, memory, third]
