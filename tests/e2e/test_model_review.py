"""The boundary review by a chat model, over HTTP: the gateway's `semantic.reviewer` is a
`model_list` chat model served by a fake OpenAI-compatible upstream on loopback, which
answers review prompts (recognised by the reviewer's system prompts) as the test says.

A paraphrase that differs in a content word the local checks cannot settle ("clean" /
"wash" a cast iron pan: calibrated ~0.94, inside the band [review.band_floor 0.80, the
0.97 threshold)) is served when the model says yes and not when it says no; once a
tenant's review tokens for the hour are spent, a review is refused
(`review_unavailable`, a miss) while other tenants are still reviewed; the tokens and
their cost show on `/metrics` and in `/admin/stats`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from gateway.review.litellm_reviewer import ANSWER_SYSTEM_PROMPT, SYSTEM_PROMPT
from gateway.testing.fake_upstream import create_fake_upstream
from gateway.testing.threaded_server import ThreadedServer
from tests.e2e.helpers import client_for
from tests.helpers import ADMIN_KEY, GatewayFactory, RunningGateway

SYSTEM = {"role": "system", "content": "You are a patient cooking teacher."}
STORED, ASKED = "How do I clean a cast iron pan?", "How do I wash a cast iron pan?"
TAP_STORED, TAP_ASKED = (
    "How do I fix a leaking kitchen tap?",
    "How do I fix a dripping kitchen tap?",
)
REVIEW_PROMPTS = (SYSTEM_PROMPT, ANSWER_SYSTEM_PROMPT)
# USD per token of the reviewer model (its `model_info`), so the cost is not zero.
INPUT_PRICE, OUTPUT_PRICE = 1e-6, 4e-6

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Scope]]
Send = Callable[[Scope], Awaitable[None]]


@dataclass
class ReviewScript:
    """What the fake reviewer answers, the usage it reports, and the reviews it got."""

    verdict: str = "yes"
    prompt_tokens: int = 120
    completion_tokens: int = 1
    reviews: list[dict[str, Any]] = field(default_factory=list)

    def reviews_of(self, text: str) -> list[dict[str, Any]]:
        return [body for body in self.reviews if text in body["messages"][-1]["content"]]


class ReviewingUpstream:
    """The fake upstream, with review prompts answered from `script`."""

    def __init__(self, script: ReviewScript) -> None:
        self._script = script
        self._inner = create_fake_upstream()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/v1/chat/completions":
            await self._inner(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        raw = b"".join(chunks)
        body = orjson.loads(raw)
        messages = body.get("messages") or []
        if messages and messages[0].get("content") in REVIEW_PROMPTS:
            await self._review(body, send)
            return
        replayed = False

        async def replay() -> Scope:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": raw, "more_body": False}

        await self._inner(scope, replay, send)

    async def _review(self, body: dict[str, Any], send: Send) -> None:
        script = self._script
        script.reviews.append(body)
        answer = {
            "id": f"chatcmpl-review{len(script.reviews)}",
            "object": "chat.completion",
            "created": 1,
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": script.verdict},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": script.prompt_tokens,
                "completion_tokens": script.completion_tokens,
                "total_tokens": script.prompt_tokens + script.completion_tokens,
            },
        }
        payload = orjson.dumps(answer)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


@pytest.fixture
def review_script() -> ReviewScript:
    return ReviewScript()


@pytest.fixture
def review_upstream(review_script: ReviewScript) -> Iterator[str]:
    server = ThreadedServer(ReviewingUpstream(review_script)).start()
    yield server.url
    server.stop()


def _deployment(name: str, url: str, **extra: Any) -> dict[str, Any]:
    return {
        "model_name": name,
        "litellm_params": {
            "model": f"openai/{name}",
            "api_base": f"{url}/v1",
            "api_key": "sk-upstream-secret-123456",
        },
        **extra,
    }


def _start(start_gateway: GatewayFactory, tmp_path: Path, url: str, policy: str) -> RunningGateway:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "default.yaml").write_text(policy)
    return start_gateway(
        policies_dir=str(policies),
        model_list=[
            _deployment("fake-model", url),
            _deployment(
                "review-model",
                url,
                model_info={
                    "input_cost_per_token": INPUT_PRICE,
                    "output_cost_per_token": OUTPUT_PRICE,
                },
            ),
        ],
        semantic={"embedder": "local", "reviewer": "review-model"},
    )


def _ask(gateway: RunningGateway, text: str, tenant: str) -> tuple[httpx.Headers, Any]:
    raw = client_for(gateway, tenant).chat.completions.with_raw_response.create(
        model="fake-model", messages=[SYSTEM, {"role": "user", "content": text}]
    )
    return raw.headers, raw.parse()


def _admin(gateway: RunningGateway, path: str) -> httpx.Response:
    return httpx.get(
        f"{gateway.url}{path}", headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=10
    )


def _metric(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
        if all(found.get(key) == value for key, value in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


# A timeout the first litellm call to the reviewer model never reaches on a busy box.
TIMEOUT = "semantic_cache:\n  review:\n    timeout_seconds: 10\n"


def test_the_model_reviewer_decides_a_content_word_in_the_band(
    start_gateway: GatewayFactory,
    review_upstream: str,
    review_script: ReviewScript,
    tmp_path: Path,
) -> None:
    gateway = _start(start_gateway, tmp_path, review_upstream, TIMEOUT)
    for tenant, verdict, layer, reason in (
        ("acme", "yes", "semantic", None),
        ("globex", "no", "miss", "review_rejected"),
    ):
        review_script.verdict = verdict
        _, first = _ask(gateway, STORED, tenant)
        headers, second = _ask(gateway, ASKED, tenant)
        assert (headers["x-gateway-cache"], headers.get("x-gateway-cache-reason")) == (
            layer,
            reason,
        )
        served = second.choices[0].message.content == first.choices[0].message.content
        assert served is (layer == "semantic")
        # The model was asked once about this tenant's pair, shown the stored answer.
        reviews = review_script.reviews_of(ASKED)
        assert len(reviews) == (1 if tenant == "acme" else 2)
        review = reviews[-1]
        assert review["model"] == "review-model" and review["max_tokens"] == 3
        prompt = review["messages"][-1]["content"]
        assert STORED in prompt and first.choices[0].message.content in prompt
        if layer == "semantic":
            assert 0.80 <= float(headers["x-gateway-similarity"]) < 0.97  # the band
    # (c) Its tokens and their cost, per tenant and model, on /metrics.
    metrics = _admin(gateway, "/metrics").text
    per_review = review_script.prompt_tokens + review_script.completion_tokens
    for tenant in ("acme", "globex"):
        labels = {"tenant": tenant, "model": "review-model"}
        assert _metric(metrics, "gateway_review_tokens_total", **labels) == per_review
        assert _metric(metrics, "gateway_review_cost_usd_total", **labels) == pytest.approx(
            review_script.prompt_tokens * INPUT_PRICE
            + review_script.completion_tokens * OUTPUT_PRICE
        )
    assert _metric(metrics, "gateway_review_calls_total", tenant="acme", verdict="accepted") == 1
    assert _metric(metrics, "gateway_review_calls_total", tenant="globex", verdict="rejected") == 1


def test_a_spent_review_budget_is_a_miss_for_that_tenant_only(
    start_gateway: GatewayFactory,
    review_upstream: str,
    review_script: ReviewScript,
    tmp_path: Path,
) -> None:
    # One review reports 900 + 1 tokens: the next one's prompt (~250 tokens) would pass
    # the tenant's 1,000 an hour.
    review_script.prompt_tokens = 900
    policy = TIMEOUT + "    tokens_per_tenant_per_hour: 1000\n"
    gateway = _start(start_gateway, tmp_path, review_upstream, policy)
    _ask(gateway, STORED, "acme")
    assert _ask(gateway, ASKED, "acme")[0]["x-gateway-cache"] == "semantic"
    metrics = _admin(gateway, "/metrics").text
    tokens = _metric(metrics, "gateway_review_tokens_total", tenant="acme", model="review-model")
    assert tokens == 901

    _ask(gateway, TAP_STORED, "acme")
    headers, _ = _ask(gateway, TAP_ASKED, "acme")
    assert (headers["x-gateway-cache"], headers["x-gateway-cache-reason"]) == (
        "miss",
        "review_unavailable",
    )
    assert review_script.reviews_of(TAP_ASKED) == []  # refused before any call
    # Another tenant's budget is its own.
    _ask(gateway, TAP_STORED, "globex")
    assert _ask(gateway, TAP_ASKED, "globex")[0]["x-gateway-cache"] == "semantic"
    assert len(review_script.reviews_of(TAP_ASKED)) == 1

    metrics = _admin(gateway, "/metrics").text
    assert _metric(metrics, "gateway_review_budget_refusals_total", tenant="acme") == 1
    assert _metric(metrics, "gateway_review_budget_refusals_total", tenant="globex") == 0
    assert _metric(metrics, "gateway_review_tokens_total", tenant="acme") == tokens  # no more
    (acme,) = [
        row for row in _admin(gateway, "/admin/stats").json()["review"] if row["tenant"] == "acme"
    ]
    assert acme["over_budget"] == 1 and acme["tokens_last_hour"] == 901
    assert acme["reviews"] == {"accepted": 1, "rejected": 0, "unavailable": 1}
