"""The semantic cache and the classifier seen from the openai client over HTTP."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.e2e.helpers import client_for, upstream_calls
from tests.helpers import FakeUpstream, GatewayFactory, RunningGateway

SYSTEM = {"role": "system", "content": "You are a concise geography tutor."}


def _ask(gateway: RunningGateway, text: str, tenant: str = "acme", **extra: Any) -> Any:
    raw = client_for(gateway, tenant).chat.completions.with_raw_response.create(
        model="fake-model", messages=[SYSTEM, {"role": "user", "content": text}], **extra
    )
    return raw.headers, raw.parse()


def test_paraphrase_is_served_semantically(gateway: RunningGateway, upstream: FakeUpstream) -> None:
    calls_before = upstream_calls(upstream, "sort a list in Python")
    _, first = _ask(gateway, "How do I sort a list in Python?")
    headers, second = _ask(gateway, "How can I sort a list in Python?")
    assert headers["x-gateway-cache"] == "semantic"
    assert 0.0 < float(headers["x-gateway-similarity"]) <= 1.0
    assert second.choices[0].message.content == first.choices[0].message.content
    assert second.model == "fake-model" and second.id != first.id
    assert second.usage is not None and second.usage.completion_tokens == 7
    assert upstream_calls(upstream, "sort a list in Python") == calls_before + 1


def test_semantic_hit_streams_the_same_text(gateway: RunningGateway) -> None:
    _, first = _ask(gateway, "How do I reverse a string in Python?")
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[SYSTEM, {"role": "user", "content": "How can I reverse a string in Python?"}],
        stream=True,
    )
    text = "".join(c.choices[0].delta.content or "" for c in raw.parse() if c.choices)
    assert raw.headers["x-gateway-cache"] == "semantic"
    assert text == first.choices[0].message.content


def test_near_miss_with_another_entity_is_refused(gateway: RunningGateway) -> None:
    _ask(gateway, "What is the capital city of Austria?")
    headers, _ = _ask(gateway, "What is the capital city of Australia?")
    assert headers["x-gateway-cache"] == "miss"
    assert headers["x-gateway-cache-reason"] in ("entity_mismatch", "below_threshold")


def test_near_misses_above_the_band_differ_in_meaning(gateway: RunningGateway) -> None:
    _ask(gateway, "How do I sort a list in Python 2?")
    headers, _ = _ask(gateway, "How do I sort a list in Python 3?")
    assert headers["x-gateway-cache"] == "miss"
    assert headers["x-gateway-cache-reason"] == "meaning_differs"
    _ask(gateway, "Is it safe to take ibuprofen with coffee?")
    headers, _ = _ask(gateway, "Is it not safe to take ibuprofen with coffee?")
    assert headers["x-gateway-cache"] == "miss"
    assert headers["x-gateway-cache-reason"] == "meaning_differs"


def test_different_system_prompt_never_shares_an_answer(gateway: RunningGateway) -> None:
    _ask(gateway, "What is the capital city of Peru?")
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[
            {"role": "system", "content": "Answer like a pirate."},
            {"role": "user", "content": "What is the capital city of Peru?"},
        ],
    )
    assert raw.headers["x-gateway-cache"] == "miss"
    assert raw.headers["x-gateway-cache-reason"] == "no_candidate"


def test_semantic_cache_is_tenant_scoped(gateway: RunningGateway) -> None:
    _ask(gateway, "How do I sort a list in Python?", tenant="acme")
    headers, _ = _ask(gateway, "How can I sort a list in Python?", tenant="globex")
    assert headers["x-gateway-cache"] == "miss"


def test_write_intent_bypasses_and_is_never_stored(
    gateway: RunningGateway, upstream: FakeUpstream
) -> None:
    text = "Please cancel my subscription to the geography newsletter."
    calls_before = upstream_calls(upstream, text)
    for _ in range(2):
        headers, _ = _ask(gateway, text)
        assert headers["x-gateway-cache"] == "bypass"
        assert headers["x-gateway-cache-reason"] in ("write_intent", "personalized")
    assert upstream_calls(upstream, text) == calls_before + 2


def test_time_sensitive_question_bypasses(gateway: RunningGateway) -> None:
    headers, _ = _ask(gateway, "What is the weather in Lima today?")
    assert (headers["x-gateway-cache"], headers["x-gateway-cache-reason"]) == (
        "bypass",
        "time_sensitive",
    )


def test_ids_and_followups_bypass(gateway: RunningGateway) -> None:
    headers, _ = _ask(gateway, "Where is parcel 1Z999AA10123456784 right now?")
    assert headers["x-gateway-cache"] == "bypass"
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[
            SYSTEM,
            {"role": "user", "content": "What is the capital of Japan?"},
            {"role": "assistant", "content": "Tokyo."},
            {"role": "user", "content": "And what about it?"},
        ],
    )
    assert raw.headers["x-gateway-cache"] == "bypass"
    assert raw.headers["x-gateway-cache-reason"] == "unresolved_followup"


def test_chinese_paraphrase_and_time_word(gateway: RunningGateway) -> None:
    _ask(gateway, "中国的首都是哪个城市？")
    headers, _ = _ask(gateway, "中国的首都是哪个城市")
    assert headers["x-gateway-cache"] in ("exact", "semantic")
    headers, _ = _ask(gateway, "今天北京的天气怎么样？")
    assert (headers["x-gateway-cache"], headers["x-gateway-cache-reason"]) == (
        "bypass",
        "time_sensitive",
    )


def test_gray_band_goes_to_a_litellm_reviewer(
    start_gateway: GatewayFactory, tmp_path: Path
) -> None:
    # This policy sends [0.9, 0.9999) to the reviewer, where this pair lands (calibrated
    # ~0.98) with agreeing entities and one content word changed (城市 / 都市), which
    # only the embedding and a reviewer can settle (a rewording alone would be served).
    stored, asked = "中国的首都是哪个城市？", "中国的首都是哪个都市？"
    policies = tmp_path / "policies-band"
    policies.mkdir()
    (policies / "default.yaml").write_text(
        "semantic_cache:\n  accept_threshold: 0.9999\n  review_min_similarity: 0.9\n"
    )
    for judge, layer, reason in (
        ("fake-judge-yes", "semantic", None),
        ("fake-judge-no", "miss", "review_rejected"),
    ):
        gateway = start_gateway(
            data_dir=tmp_path / judge,
            policies_dir=str(policies),
            semantic={"embedder": "local", "reviewer": judge},
        )
        _ask(gateway, stored)
        headers, _ = _ask(gateway, asked)
        assert headers["x-gateway-cache"] == layer
        assert headers.get("x-gateway-cache-reason") == reason


def test_long_prompts_use_the_exact_cache_only_and_stay_fast(gateway: RunningGateway) -> None:
    # A long turn whose ask can be told from its material: the material must match
    # exactly, so a changed sentence is never a candidate.
    notes = "The river rises in spring. " * 200
    long_text = "Summarise the following notes. " + notes
    headers, _ = _ask(gateway, long_text)
    assert headers["x-gateway-cache"] == "miss"
    assert headers["x-gateway-cache-reason"] == "no_candidate"
    assert _ask(gateway, long_text)[0]["x-gateway-cache"] == "exact"
    edited = "Summarise the following notes. " + notes.replace("spring", "autumn", 1)
    assert _ask(gateway, edited)[0]["x-gateway-cache-reason"] == "no_candidate"
    # Megabytes of text (within the body limit) cost neither the classifier, the
    # splitter nor the embedder more than a bounded slice of work.
    huge = "Please read this log and tell me what failed. " + "line ok; " * 300_000
    started = time.monotonic()
    headers, _ = _ask(gateway, huge)
    assert headers["x-gateway-cache-reason"] == "long_prompt"
    assert time.monotonic() - started < 10


def test_a_litellm_reviewer_is_shown_the_stored_answer(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    # Every candidate goes to the reviewer (the band spans the whole scale); the judge
    # says yes only when its prompt carries the stored answer.
    stored, asked = "What is the capital of Peru?", "Which city is the capital of Peru?"
    for show, layer in ((True, "semantic"), (False, "miss")):
        policies = tmp_path / f"policies-{show}"
        policies.mkdir()
        (policies / "default.yaml").write_text(
            "semantic_cache:\n"
            "  accept_threshold: 0.9999\n"
            "  review_min_similarity: 0.01\n"
            "  strict_band_terms: false\n"
            f"  review: {{show_stored_answer: {str(show).lower()}}}\n"
        )
        gateway = start_gateway(
            data_dir=tmp_path / f"data-{show}",
            policies_dir=str(policies),
            semantic={"embedder": "local", "reviewer": "fake-judge-reads-answer"},
        )
        _, first = _ask(gateway, stored)
        judged_before = len(upstream.log.chat_bodies)
        headers, _ = _ask(gateway, asked)
        assert headers["x-gateway-cache"] == layer
        review = upstream.log.chat_bodies[judged_before]
        assert review["model"] == "fake-judge-reads-answer"
        prompt = review["messages"][-1]["content"]
        assert (first.choices[0].message.content in prompt) is show
