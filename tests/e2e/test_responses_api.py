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
