"""`gateway bench`'s semantic hits on new wordings: the paraphrases it sends once each,
and how the report counts and shows them next to the repeated paraphrase."""

from __future__ import annotations

from collections import Counter

import orjson

from gateway_tools.bench.constants import (
    EXACT_PROMPT,
    SEMANTIC,
    SEMANTIC_PRIME_PROMPT,
    SEMANTIC_PROMPT,
)
from gateway_tools.bench.measure import Series
from gateway_tools.bench.prompts import LANGUAGES, TASKS, first_seen_paraphrases
from gateway_tools.bench.report.bench import build_report, render_table

FIXED = frozenset({SEMANTIC_PRIME_PROMPT, EXACT_PROMPT})


def _text(body: bytes) -> str:
    content: str = orjson.loads(body)["messages"][-1]["content"]
    return content


def test_each_paraphrase_is_new_and_of_its_own_primed_question() -> None:
    pairs = first_seen_paraphrases(seed=3, count=1000, exclude=FIXED)
    questions = [_text(question) for question, _ in pairs]
    paraphrases = [_text(paraphrase) for _, paraphrase in pairs]
    # Every (task, language) pair but the one `gateway bench` already primes.
    assert len(pairs) == len(TASKS) * len(LANGUAGES) - 1
    assert SEMANTIC_PRIME_PROMPT not in questions
    assert len(set(paraphrases)) == len(paraphrases)
    assert not set(paraphrases) & {*questions, SEMANTIC_PROMPT, *FIXED}
    for question, paraphrase in zip(questions, paraphrases, strict=True):
        assert question.startswith("How do I ")
        assert paraphrase == question.replace("How do I ", "How should I ", 1)


def test_the_count_and_the_order_follow_the_seed() -> None:
    first = first_seen_paraphrases(seed=5, count=40)
    assert len(first) == 40
    assert first == first_seen_paraphrases(seed=5, count=40)
    assert first != first_seen_paraphrases(seed=6, count=40)


def _series(latencies_ms: list[float], wrong_layer: int = 0) -> Series:
    layers = Counter({SEMANTIC: len(latencies_ms) - wrong_layer, "miss": wrong_layer})
    return Series(latencies_ms=latencies_ms, wrong_layer=wrong_layer, layers=+layers)


def test_the_report_shows_new_wordings_apart_and_counts_their_wrong_layers() -> None:
    quick, fresh = _series([1.0, 1.5, 2.0]), _series([12.0, 14.0, 16.0])
    report = build_report(3, quick, quick, quick, quick, {}, fresh)
    assert report["latency_ms"]["semantic_hit"]["p50"] == 1.5
    assert report["latency_ms"]["semantic_hit_first_seen"]["p50"] == 14.0
    assert report["ok"]
    report["storage"] = {"backend": "embedded", "failures": 0}  # the runner adds it
    row = next(line for line in render_table(report).splitlines() if "new wording" in line)
    assert "14.000" in row

    refused = build_report(3, quick, quick, quick, quick, {}, _series([12.0, 14.0], 1))
    assert refused["non_semantic_hits"] == 1
    assert not refused["ok"]
