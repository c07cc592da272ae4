"""The L1 exact cache seen from a real openai client over HTTP."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.helpers import client_for, unique_prompt, upstream_calls
from tests.helpers import FakeUpstream, GatewayFactory, RunningGateway


def _ask(gateway: RunningGateway, prompt: str, tenant: str = "acme", **extra: object):  # type: ignore[no-untyped-def]
    raw = client_for(gateway, tenant).chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": prompt}], **extra
    )
    return raw.headers, raw.parse()


def _stream_text(
    gateway: RunningGateway, prompt: str, **extra: object
) -> tuple[str, dict[str, str], list]:  # type: ignore[type-arg]
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": prompt}], stream=True, **extra
    )
    chunks = list(raw.parse())
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return text, dict(raw.headers), chunks


def test_repeat_is_served_from_exact_cache_without_calling_upstream(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt()
    first_headers, first = _ask(gateway, prompt)
    second_headers, second = _ask(gateway, prompt)

    assert first_headers["x-gateway-cache"] == "miss"
    assert first_headers["x-gateway-cache-reason"] == "no_candidate"  # neither layer had it
    assert second_headers["x-gateway-cache"] == "exact"
    assert "x-gateway-cache-reason" not in second_headers
    assert second.choices[0].message.content == first.choices[0].message.content
    assert second.id != first.id
    assert second.model == "fake-model"
    # The stored answer's counts, its prompt marked as cached (policy cache_hit_usage).
    assert second.usage is not None and second.usage.total_tokens == 17
    assert second_headers["x-gateway-tokens-saved"] == "17"
    assert upstream_calls(upstream, prompt) == 1
    assert first_headers["x-request-id"] != second_headers["x-request-id"]


def test_same_prompt_from_another_tenant_is_a_miss(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt()
    _ask(gateway, prompt, tenant="acme")
    headers, _ = _ask(gateway, prompt, tenant="globex")
    assert headers["x-gateway-cache"] == "miss"
    assert upstream_calls(upstream, prompt) == 2
    again_headers, _ = _ask(gateway, prompt, tenant="globex")
    assert again_headers["x-gateway-cache"] == "exact"


def test_parameters_that_change_the_answer_change_the_key(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt()
    _ask(gateway, prompt, temperature=0)
    headers, _ = _ask(gateway, prompt, temperature=0.5)
    assert headers["x-gateway-cache"] == "miss"
    headers, _ = _ask(gateway, prompt, temperature=0.0)  # 0 and 0.0 are the same value
    assert headers["x-gateway-cache"] == "exact"
    headers, _ = _ask(gateway, prompt, temperature=0, seed=7)
    assert headers["x-gateway-cache"] == "miss"
    assert upstream_calls(upstream, prompt) == 3


def test_streamed_answer_is_replayed_from_cache_with_the_same_text(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt()
    first_text, first_headers, _ = _stream_text(gateway, prompt)
    second_text, second_headers, chunks = _stream_text(gateway, prompt)

    assert first_headers["x-gateway-cache"] == "miss"
    assert second_headers["x-gateway-cache"] == "exact"
    assert second_headers["content-type"].startswith("text/event-stream")
    assert first_text and second_text == first_text
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert upstream_calls(upstream, prompt) == 1


def test_stream_and_json_share_one_entry(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    prompt = unique_prompt()
    streamed_text, _, _ = _stream_text(gateway, prompt)
    headers, completion = _ask(gateway, prompt)
    assert headers["x-gateway-cache"] == "exact"
    assert completion.choices[0].message.content == streamed_text
    assert completion.choices[0].finish_reason == "stop"
    assert upstream_calls(upstream, prompt) == 1


def test_include_usage_is_honoured_on_miss_and_on_replay(gateway: RunningGateway) -> None:
    prompt = unique_prompt()
    # A replay reports the stored answer's usage; what it saved is also in a header.
    for expected_layer, expected_tokens in (("miss", 17), ("exact", 17)):
        _, headers, chunks = _stream_text(gateway, prompt, stream_options={"include_usage": True})
        assert headers["x-gateway-cache"] == expected_layer
        assert chunks[-1].usage is not None
        assert chunks[-1].usage.total_tokens == expected_tokens
        assert chunks[-1].choices == []
    assert headers["x-gateway-tokens-saved"] == "17"
    _, _, chunks = _stream_text(gateway, prompt)
    assert all(c.usage is None for c in chunks)


def test_truncated_answer_is_not_cached(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    prompt = unique_prompt("Write a long essay [[length]]")
    _, first = _ask(gateway, prompt)
    headers, _ = _ask(gateway, prompt)
    assert first.choices[0].finish_reason == "length"
    assert headers["x-gateway-cache"] == "miss"
    assert upstream_calls(upstream, prompt) == 2


def test_tool_call_answer_is_replayed_faithfully(gateway: RunningGateway) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "lookup_city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    prompt = unique_prompt("Which city? [[tool]]")
    _, first = _ask(gateway, prompt, tools=tools)
    _, _, chunks = _stream_text(gateway, prompt, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    assert first.choices[0].finish_reason == "tool_calls"
    replayed = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert [(t.id, t.function.name, t.function.arguments) for t in replayed] == [
        (call.id, call.function.name, call.function.arguments)
    ]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_no_cache_skips_lookup_but_stores(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    prompt = unique_prompt()
    _, first = _ask(gateway, prompt)
    headers, fresh = _ask(gateway, prompt, extra_headers={"Cache-Control": "no-cache"})
    assert headers["x-gateway-cache"] == "miss"
    assert headers["x-gateway-cache-reason"] == "client_no_cache"
    assert fresh.choices[0].message.content != first.choices[0].message.content
    headers, cached = _ask(gateway, prompt)
    assert headers["x-gateway-cache"] == "exact"
    assert cached.choices[0].message.content == fresh.choices[0].message.content
    assert upstream_calls(upstream, prompt) == 2


def test_no_store_is_never_stored(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    prompt = unique_prompt()
    _ask(gateway, prompt, extra_headers={"Cache-Control": "no-store"})
    headers, _ = _ask(gateway, prompt)
    assert headers["x-gateway-cache"] == "miss"
    assert upstream_calls(upstream, prompt) == 2


def test_aborted_upstream_stream_is_not_cached(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt("Tell me a story [[abort]]")
    for _ in range(2):
        raw = client_for(gateway).chat.completions.with_raw_response.create(
            model="fake-model", messages=[{"role": "user", "content": prompt}], stream=True
        )
        assert raw.headers["x-gateway-cache"] == "miss"
        try:
            chunks = list(raw.parse())
        except Exception as exc:  # the openai client raises on an in-band error event
            assert "upstream" in str(exc).lower() or "provider" in str(exc).lower()
        else:
            assert not any(c.choices and c.choices[0].finish_reason for c in chunks)
    assert upstream_calls(upstream, prompt) == 2


def test_cache_survives_a_restart(start_gateway: GatewayFactory, tmp_path: Path) -> None:
    data_dir = tmp_path / "durable"
    first_gateway = start_gateway(data_dir=data_dir)
    prompt = unique_prompt()
    _, first = _ask(first_gateway, prompt)
    first_gateway.server.stop()

    second_gateway = start_gateway(data_dir=data_dir)
    headers, again = _ask(second_gateway, prompt)
    assert headers["x-gateway-cache"] == "exact"
    assert again.choices[0].message.content == first.choices[0].message.content
