from __future__ import annotations

from typing import Any

from gateway.cache.keys import compatibility_fingerprint, exact_cache_key
from gateway.turn import parse_last_user_turn

NAMESPACE = {"policy_version": "1", "system_prompt_version": "", "tool_schema_version": ""}


def key(body: dict[str, Any], tenant: str = "acme", namespace: dict[str, str] = NAMESPACE) -> str:
    return exact_cache_key(tenant=tenant, namespace=namespace, model=body["model"], body=body)


BASE = {"model": "m", "messages": [{"role": "user", "content": "Hello there"}], "temperature": 0}


def test_key_is_stable_under_field_order_and_transport_fields() -> None:
    reordered = {"temperature": 0, "messages": BASE["messages"], "model": "m"}
    assert key(BASE) == key(reordered)
    assert key(BASE) == key({**BASE, "stream": True, "stream_options": {"include_usage": True}})
    assert key(BASE) == key({**BASE, "user": "someone", "metadata": {"trace": "x"}})


def test_equivalent_values_share_a_key() -> None:
    assert key(BASE) == key({**BASE, "temperature": 0.0})
    padded = {**BASE, "messages": [{"role": "user", "content": "  Hello there\n"}]}
    parts = {
        **BASE,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello there"}]}],
    }
    assert key(BASE) == key(padded) == key(parts)
    assert key(BASE) == key(
        {**BASE, "messages": [{"role": "user", "content": "Hello there", "name": None}]}
    )


def test_everything_that_changes_the_answer_changes_the_key() -> None:
    variants = [
        {**BASE, "model": "other"},
        {**BASE, "temperature": 0.7},
        {**BASE, "top_p": 0.5},
        {**BASE, "max_tokens": 10},
        {**BASE, "stop": ["\n"]},
        {**BASE, "seed": 1},
        {**BASE, "n": 2},
        {**BASE, "tools": [{"type": "function", "function": {"name": "f"}}]},
        {**BASE, "tool_choice": "none"},
        {**BASE, "response_format": {"type": "json_object"}},
        {**BASE, "some_future_parameter": True},
        {**BASE, "messages": [{"role": "user", "content": "hello there"}]},
        {**BASE, "messages": [{"role": "system", "content": "Be terse."}, *BASE["messages"]]},
    ]
    keys = {key(v) for v in variants} | {key(BASE)}
    assert len(keys) == len(variants) + 1


def test_tenant_and_namespace_separate_keys() -> None:
    assert key(BASE, tenant="acme") != key(BASE, tenant="globex")
    assert key(BASE) != key(BASE, namespace={**NAMESPACE, "policy_version": "2"})
    assert key(BASE) != key(BASE, namespace={**NAMESPACE, "tool_schema_version": "v7"})


def _fingerprint(content: Any, system: str = "Be brief.") -> str:
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": content}],
    }
    turn = parse_last_user_turn(body["messages"], 300)
    return compatibility_fingerprint(
        tenant="acme", namespace={"policy": "1"}, model="m", body=body, turn=turn
    )


def _with_image(text: str, url: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}]


def test_the_ask_is_left_out_of_the_fingerprint_and_everything_else_is_in() -> None:
    assert _fingerprint("How do I sort a list?") == _fingerprint("How can I sort a list?")
    assert _fingerprint("How do I sort a list?") != _fingerprint("How do I sort a list?", "Rhyme.")


def test_attachments_enter_the_fingerprint() -> None:
    text = "Read the name on this passport."
    one = _fingerprint(_with_image(text, "https://example.test/passport-1.png"))
    other = _fingerprint(_with_image(text, "https://example.test/passport-2.png"))
    inline = _fingerprint(_with_image(text, "data:image/png;base64,iVBORw0KGgoAAAA"))
    assert len({one, other, inline, _fingerprint(text)}) == 4
    assert one == _fingerprint(_with_image(text, "https://example.test/passport-1.png"))


def test_material_enters_the_fingerprint() -> None:
    contract = "Summarize this contract:\nThe buyer pays within {days} days of delivery."
    thirty = _fingerprint(contract.format(days=30))
    assert thirty != _fingerprint(contract.format(days=60))
    reworded = "Give me a summary of this contract:\nThe buyer pays within 30 days of delivery."
    assert thirty == _fingerprint(reworded)
