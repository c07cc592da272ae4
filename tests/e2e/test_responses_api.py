"""The Responses API (`/v1/responses`) seen from its real clients over HTTP: the
official `openai` client, the OpenAI Agents SDK, langchain-openai with
`use_responses_api=True`, and `litellm.responses()` as a client; both backends."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from tests.e2e.helpers import client_for, unique_prompt, upstream_calls
from tests.helpers import TENANT_KEYS, FakeUpstream, RunningGateway

MODEL = "fake-model"


def _create(gateway: RunningGateway, tenant: str = "acme", **kwargs: Any) -> tuple[Any, Any]:
    raw = client_for(gateway, tenant).responses.with_raw_response.create(model=MODEL, **kwargs)
    return raw.headers, raw.parse()


def _comparable(response: Any) -> dict[str, Any]:
    """A parsed response without what differs between two answers of one question:
    ids, timestamps, and the usage's cache detail."""
    data = response.model_dump()
    data.pop("id")
    data.pop("created_at")
    for item in data["output"]:
        item.pop("id", None)
    data.pop("usage")
    return data


def test_string_input_miss_then_exact_hit(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    prompt = unique_prompt()
    headers, first = _create(gateway, input=prompt)
    assert headers["x-gateway-cache"] == "miss"
    assert first.object == "response" and first.status == "completed"
    assert first.output_text.startswith("Answer #")
    assert first.usage.input_tokens == 10 and first.usage.output_tokens == 7
    assert first.usage.input_tokens_details.cached_tokens == 0
    headers, second = _create(gateway, input=prompt)
    assert headers["x-gateway-cache"] == "exact"
    assert second.id != first.id
    assert second.output_text == first.output_text
    # The stored answer's counts, every input token marked as served from cache.
    assert second.usage.input_tokens == 10 and second.usage.total_tokens == 17
    assert second.usage.input_tokens_details.cached_tokens == 10
    assert _comparable(second) == _comparable(first)
    assert upstream_calls(upstream, prompt) == 1
    # A hit is stored under its own id too.
    assert client_for(gateway).responses.retrieve(second.id).output_text == first.output_text


def test_chat_entry_serves_the_same_question_through_responses(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt("What is the tallest mountain in Europe?")
    chat = client_for(gateway).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": prompt}]
    )
    headers, response = _create(gateway, input=prompt)
    assert headers["x-gateway-cache"] == "exact"
    assert response.output_text == chat.choices[0].message.content
    # And the other way round, with instructions as the system message.
    other = unique_prompt("What is the longest river in Asia?")
    _create(gateway, input=other, instructions="Be brief.")
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model=MODEL,
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": other}],
    )
    assert raw.headers["x-gateway-cache"] == "exact"
    assert upstream_calls(upstream, prompt) == 1 and upstream_calls(upstream, other) == 1


def test_paraphrase_is_a_semantic_hit(gateway: RunningGateway) -> None:
    _, first = _create(gateway, input="How do I sort a list in Python?")
    headers, second = _create(gateway, input="How can I sort a list in Python?")
    assert headers["x-gateway-cache"] == "semantic"
    assert second.output_text == first.output_text
    assert second.usage.input_tokens_details.cached_tokens == second.usage.input_tokens


def _streamed(gateway: RunningGateway, **kwargs: Any) -> tuple[list[Any], Any]:
    client = client_for(gateway)
    with client.responses.stream(model=MODEL, **kwargs) as stream:
        events = list(stream)
        final = stream.get_final_response()
    return events, final


def _event_shape(events: list[Any]) -> list[tuple[str, Any]]:
    """The events' types and texts, consecutive deltas joined: a replay sends the
    stored text in one delta, the live answer in as many as the provider sent."""
    shape: list[tuple[str, Any]] = []
    for event in events:
        detail = getattr(event, "delta", None) or getattr(event, "text", None)
        if shape and event.type.endswith(".delta") and shape[-1][0] == event.type:
            shape[-1] = (event.type, shape[-1][1] + detail)
        else:
            shape.append((event.type, detail))
    return shape


def test_stream_live_and_replayed_deserialise_alike(gateway: RunningGateway) -> None:
    prompt = unique_prompt("Name three primary colours.")
    live_events, live = _streamed(gateway, input=prompt)
    replay_events, replayed = _streamed(gateway, input=prompt)
    types = [event.type for event in live_events]
    assert types[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert types[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in live_events] == list(range(len(live_events)))
    assert _event_shape(replay_events) == _event_shape(live_events)
    assert replayed.id != live.id
    assert _comparable(replayed) == _comparable(live)
    assert live.usage.input_tokens_details.cached_tokens == 0
    assert replayed.usage.input_tokens_details.cached_tokens == replayed.usage.input_tokens == 10
    # A streamed answer is stored like a JSON one: the JSON request is an exact hit.
    headers, as_json = _create(gateway, input=prompt)
    assert headers["x-gateway-cache"] == "exact" and as_json.output_text == live.output_text


class Capital(BaseModel):
    country: str
    city: str
    population_millions: float


def test_parse_with_a_pydantic_model(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    prompt = unique_prompt("Give the capital of France as JSON.")
    client = client_for(gateway)
    first = client.responses.parse(model=MODEL, input=prompt, text_format=Capital)
    assert isinstance(first.output_parsed, Capital)
    assert first.output_parsed.city.startswith("Answer #")
    body = next(b for b in upstream.log.chat_bodies if prompt in str(b["messages"]))
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "Capital"
    again = client.responses.parse(model=MODEL, input=prompt, text_format=Capital)
    assert again.output_parsed == first.output_parsed
    assert upstream_calls(upstream, prompt) == 1


def test_parameters_reach_the_provider(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    prompt = unique_prompt("Say hello.")
    _create(
        gateway,
        input=[{"role": "user", "content": [{"type": "input_text", "text": prompt}]}],
        instructions="Answer in one word.",
        temperature=0.3,
        top_p=0.9,
        max_output_tokens=50,
        metadata={"team": "search"},
        text={"format": {"type": "json_object"}},
        extra_body={"seed": 7},
    )
    body = next(b for b in upstream.log.chat_bodies if prompt in str(b["messages"]))
    assert body["messages"][0] == {"role": "system", "content": "Answer in one word."}
    assert body["temperature"] == 0.3 and body["top_p"] == 0.9
    assert body["max_tokens"] == 50 and body["seed"] == 7
    assert body["response_format"] == {"type": "json_object"}
    assert "store" not in body and "input" not in body


def test_function_tool_call_and_its_output(gateway: RunningGateway) -> None:
    tools = [
        {
            "type": "function",
            "name": "find_capital",
            "description": "The capital city of a country.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    prompt = unique_prompt("Which city is the capital? [[tool]]")
    _, first = _create(gateway, input=prompt, tools=tools)
    call = first.output[0]
    assert call.type == "function_call" and call.name == "find_capital"
    assert call.arguments == '{"city": "Paris"}'
    _, second = _create(
        gateway,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "Paris"}],
        tools=tools,
    )
    assert "the tool said Paris" in second.output_text


def test_retrieve_follow_up_and_delete(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    client = client_for(gateway)
    prompt = unique_prompt("What is the capital of Peru?")
    first = client.responses.create(model=MODEL, input=prompt)
    fetched = client.responses.retrieve(first.id)
    assert fetched.model_dump() == first.model_dump()
    follow = client.responses.create(
        model=MODEL, input="And in French?", previous_response_id=first.id
    )
    assert follow.previous_response_id == first.id
    body = upstream.log.chat_bodies[-1]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"][0]["text"] == first.output_text
    # The same follow-up after another conversation is not that conversation's answer.
    other = client.responses.create(
        model=MODEL, input=unique_prompt("What is the capital of Chile?")
    )
    raw = client.responses.with_raw_response.create(
        model=MODEL, input="And in French?", previous_response_id=other.id
    )
    assert raw.headers["x-gateway-cache"] != "exact"
    assert raw.parse().output_text != follow.output_text
    # Another tenant cannot see it; deleted, nobody can.
    with pytest.raises(Exception) as other_tenant:
        client_for(gateway, "globex").responses.retrieve(first.id)
    assert getattr(other_tenant.value, "status_code", None) == 404
    client.responses.delete(first.id)
    missing = httpx.get(
        f"{gateway.base_url}/responses/{first.id}",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
    )
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"


def test_store_false_is_not_retrievable(gateway: RunningGateway) -> None:
    client = client_for(gateway)
    response = client.responses.create(model=MODEL, input=unique_prompt(), store=False)
    assert response.store is False
    reply = httpx.get(
        f"{gateway.base_url}/responses/{response.id}",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
    )
    assert reply.status_code == 404


def test_bad_requests_get_the_openai_envelope(gateway: RunningGateway) -> None:
    headers = {"authorization": f"Bearer {TENANT_KEYS['acme']}"}
    for body, param in (
        ({"model": MODEL}, "input"),
        ({"model": MODEL, "input": 3}, "input"),
        ({"model": MODEL, "input": "hi", "background": True}, "background"),
        ({"model": MODEL, "input": "hi", "previous_response_id": "resp_nope"}, None),
        ({"model": "no-such-model", "input": "hi"}, "model"),
    ):
        reply = httpx.post(f"{gateway.base_url}/responses", json=body, headers=headers)
        assert 400 <= reply.status_code < 500, body
        error = reply.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        if param is not None:
            assert str(error["param"]).startswith(param), (body, error)


# --- the OpenAI Agents SDK (its default model uses the Responses API) -----------------


def _agent(gateway: RunningGateway, with_tool: bool = False) -> Any:
    from agents import Agent, OpenAIResponsesModel, function_tool
    from openai import AsyncOpenAI

    @function_tool
    def find_capital(city: str) -> str:
        """The capital city named by `city`."""
        return f"{city} is the capital"

    client = AsyncOpenAI(base_url=gateway.base_url, api_key=TENANT_KEYS["acme"], max_retries=0)
    return Agent(
        name="assistant",
        instructions="You answer geography questions.",
        model=OpenAIResponsesModel(model=MODEL, openai_client=client),
        tools=[find_capital] if with_tool else [],
    )


def _run(gateway: RunningGateway, prompt: str, with_tool: bool = False) -> Any:
    """`Runner.run`, on a loop (and an openai client) of its own."""
    import asyncio

    from agents import RunConfig, Runner

    async def run() -> Any:
        agent = _agent(gateway, with_tool)
        return await Runner.run(agent, prompt, run_config=RunConfig(tracing_disabled=True))

    return asyncio.run(run())


def _run_streamed(gateway: RunningGateway, prompt: str, with_tool: bool = False) -> Any:
    """`Runner.run_streamed`, every event consumed."""
    import asyncio

    from agents import RunConfig, Runner

    async def run() -> Any:
        agent = _agent(gateway, with_tool)
        result = Runner.run_streamed(agent, prompt, run_config=RunConfig(tracing_disabled=True))
        async for _ in result.stream_events():
            pass
        return result

    return asyncio.run(run())


def _agent_answer(result: Any) -> tuple[str, list[Any]]:
    """The final output and the model responses' output items, ids left out."""
    items = [
        {k: v for k, v in item.model_dump().items() if k != "id"}
        for response in result.raw_responses
        for item in response.output
    ]
    return str(result.final_output), items


def test_agents_sdk_miss_hit_paraphrase_and_streamed_replay(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt("What is the capital of Spain?")
    first = _run(gateway, prompt)
    assert str(first.final_output).startswith("Answer #")
    again = _run(gateway, prompt)
    assert _agent_answer(again) == _agent_answer(first)
    assert upstream_calls(upstream, prompt) == 1
    assert again.raw_responses[0].usage.input_tokens == 10
    paraphrased = _run(gateway, "How can I sort a list in Python?")
    original = _run(gateway, "How do I sort a list in Python?")
    assert paraphrased.final_output == original.final_output
    streamed_prompt = unique_prompt("What is the capital of Italy?")
    live = _run_streamed(gateway, streamed_prompt)
    replayed = _run_streamed(gateway, streamed_prompt)
    assert _agent_answer(replayed) == _agent_answer(live)
    assert upstream_calls(upstream, streamed_prompt) == 1


def test_agents_sdk_function_tool(gateway: RunningGateway) -> None:
    result = _run(gateway, unique_prompt("Which city is the capital? [[tool]]"), with_tool=True)
    assert "the tool said Paris is the capital" in str(result.final_output)
    streamed = _run_streamed(
        gateway, unique_prompt("Which city is the capital? [[tool]]"), with_tool=True
    )
    assert "the tool said Paris is the capital" in str(streamed.final_output)


# --- langchain-openai with use_responses_api=True -------------------------------------


def _chat_model(gateway: RunningGateway, streaming: bool = False) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=MODEL,
        base_url=gateway.base_url,
        api_key=TENANT_KEYS["acme"],
        use_responses_api=True,
        max_retries=0,
        streaming=streaming,
    )


def _message_text(message: Any) -> str:
    return str(message.text() if callable(message.text) else message.text)


def test_langchain_miss_hit_paraphrase_and_streamed_replay(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    model = _chat_model(gateway)
    prompt = unique_prompt("What is the capital of Norway?")
    first = model.invoke(prompt)
    second = model.invoke(prompt)
    assert _message_text(second) == _message_text(first)
    assert _message_text(first).startswith("Answer #")
    assert upstream_calls(upstream, prompt) == 1
    # Usage of the hit: the stored answer's counts, its input marked as cached.
    assert second.usage_metadata["input_tokens"] == 10
    assert second.usage_metadata["input_token_details"]["cache_read"] == 10
    original = model.invoke("How do I sort a list in Python?")
    paraphrased = model.invoke("How can I sort a list in Python?")
    assert _message_text(paraphrased) == _message_text(original)
    streamed_prompt = unique_prompt("What is the capital of Sweden?")

    def streamed() -> Any:
        chunks = list(model.stream(streamed_prompt))
        total = chunks[0]
        for chunk in chunks[1:]:
            total = total + chunk
        return total

    live, replayed = streamed(), streamed()
    assert _message_text(replayed) == _message_text(live)
    assert replayed.usage_metadata["input_tokens"] == live.usage_metadata["input_tokens"]
    assert upstream_calls(upstream, streamed_prompt) == 1


# --- litellm.responses() as a client --------------------------------------------------


def _litellm_responses(gateway: RunningGateway, prompt: str, stream: bool = False) -> Any:
    import litellm

    return litellm.responses(
        model=f"openai/{MODEL}",
        input=prompt,
        api_base=gateway.base_url,
        api_key=TENANT_KEYS["acme"],
        stream=stream,
    )


def _litellm_text(response: Any) -> str:
    return "".join(
        part.text
        for item in response.output
        if getattr(item, "type", None) == "message"
        for part in item.content
        if getattr(part, "type", None) == "output_text"
    )


def test_litellm_responses_miss_hit_paraphrase_and_streamed_replay(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    prompt = unique_prompt("What is the capital of Finland?")
    first = _litellm_responses(gateway, prompt)
    second = _litellm_responses(gateway, prompt)
    assert _litellm_text(second) == _litellm_text(first)
    assert _litellm_text(first).startswith("Answer #")
    assert upstream_calls(upstream, prompt) == 1
    original = _litellm_responses(gateway, "How do I sort a list in Python?")
    paraphrased = _litellm_responses(gateway, "How can I sort a list in Python?")
    assert _litellm_text(paraphrased) == _litellm_text(original)
    streamed_prompt = unique_prompt("What is the capital of Denmark?")

    def streamed() -> Any:
        completed = [
            event.response
            for event in _litellm_responses(gateway, streamed_prompt, stream=True)
            if getattr(event, "type", None) == "response.completed"
        ]
        assert len(completed) == 1
        return completed[0]

    live, replayed = streamed(), streamed()
    assert _litellm_text(replayed) == _litellm_text(live)
    assert upstream_calls(upstream, streamed_prompt) == 1
