"""`benchmarks/memory_load.py`: its generated corpus, request headers, percentiles,
the differences to the reference kind, the failure list and the table."""

from __future__ import annotations

import random
import re
from typing import Any

from gateway_tools.bench.constants import EXACT_PROMPT
from gateway_tools.bench.memory_load.corpus import (
    KNOWLEDGE_FRAMES,
    batches,
    generated_texts,
    knowledge_texts,
    memory_texts,
)
from gateway_tools.bench.memory_load.phases import KindSeries, is_exact_hit, is_forwarded
from gateway_tools.bench.memory_load.report import (
    failures,
    quantiles_ms,
    render,
    summarise,
    with_differences,
)
from gateway_tools.bench.memory_load.scenario import (
    NEITHER_KIND,
    NO_USER_HIT,
    SESSION_SUFFIX,
    auth_section,
    hit_kinds,
    miss_kinds,
)

# What the gateway keeps of a client-supplied x-request-id (gateway/api/request_id.py).
SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def test_generated_texts_are_distinct_exactly_as_many_and_seeded() -> None:
    # A frame with few slots forces repeats: they are drawn again, never kept twice.
    texts = generated_texts(500, ("The {a} {n}.",), random.Random(3))
    assert len(texts) == 500 == len(set(texts))
    assert knowledge_texts(50, random.Random(9)) == knowledge_texts(50, random.Random(9))
    assert knowledge_texts(50, random.Random(9)) != knowledge_texts(50, random.Random(10))


def test_the_corpus_never_mentions_what_the_exact_hit_asks() -> None:
    asked = {w.strip("?").lower() for w in EXACT_PROMPT.split()} - {"what", "the", "of", "a"}
    rng = random.Random(1)
    for text in knowledge_texts(2000, rng) + memory_texts(500, rng):
        words = {w.strip(".,;:").lower() for w in text.split()}
        assert not words & asked, text
    assert all("{" not in text for text in knowledge_texts(len(KNOWLEDGE_FRAMES), rng))


def test_batches_cover_every_item_in_order_within_the_size() -> None:
    items = [str(i) for i in range(250)]
    chunks = batches(items, 100)
    assert [len(c) for c in chunks] == [100, 100, 50]
    assert [x for chunk in chunks for x in chunk] == items


def test_request_headers_name_user_and_session_only_when_the_kind_has_them() -> None:
    kinds = {kind.name: kind for kind in (*miss_kinds(), *hit_kinds())}
    assert len(kinds) == 11
    no_user = kinds[NO_USER_HIT].headers("rid-1", "sess")
    assert no_user == "x-request-id: rid-1\r\n"
    with_session = kinds[NEITHER_KIND + SESSION_SUFFIX].headers("rid-2", "sess")
    assert "x-gateway-user: user-empty\r\n" in with_session
    assert "x-gateway-session: sess\r\n" in with_session
    assert "x-gateway-session" not in kinds[NEITHER_KIND].headers("rid-3", "sess")
    for kind in kinds.values():
        assert SAFE_REQUEST_ID.match(f"ml-abc123-{kind.slug}-99999"), kind.name
    assert len({kind.slug for kind in kinds.values()}) == len(kinds)
    keys = [key for tenant in auth_section()["tenants"] for key in tenant["api_keys"]]
    assert len(set(keys)) == 2 and auth_section()["admin_keys"]


def test_forwarded_paths_and_exact_hits_are_told_apart() -> None:
    assert is_forwarded("miss/below_threshold")
    assert is_forwarded("bypass/memory_personalized")
    assert not is_forwarded("bypass/time_sensitive")
    assert not is_forwarded("miss/store_unavailable")  # the fail-open path
    assert not is_forwarded("semantic")
    assert is_exact_hit("exact") and not is_exact_hit("bypass/memory_personalized")


def test_quantiles_use_the_inclusive_method() -> None:
    values = [float(v) for v in range(1, 101)]
    assert quantiles_ms(values) == {"p50": 50.5, "p95": 95.05, "p99": 99.01, "n": 100}
    assert quantiles_ms([])["p50"] is None
    assert quantiles_ms([2.5]) == {"p50": 2.5, "p95": 2.5, "p99": 2.5, "n": 1}


def _series(latencies: list[float], memory_ms: list[float], recorded: int | None = None) -> Any:
    series = KindSeries()
    for index, (latency, memory) in enumerate(zip(latencies, memory_ms, strict=True)):
        request_id = f"r{index}"
        series.latencies_ms[request_id] = latency
        if recorded is None or index < recorded:
            series.records[request_id] = {
                "stages_ms": {
                    "memory": memory,
                    "memory_retrieve": memory / 2,
                    "memory_embed": memory / 4,
                },
                "memory_items": 2,
            }
        series.layers["miss/below_threshold"] += 1
    return series


def test_summaries_read_the_memory_stage_from_the_records_and_compare_per_session_mode() -> None:
    kinds = {
        NEITHER_KIND: summarise(_series([10.0, 12.0, 14.0], [0.1, 0.2, 0.3])),
        "memories only": summarise(_series([13.0, 15.0, 17.0], [2.0, 3.0, 4.0])),
        NEITHER_KIND + SESSION_SUFFIX: summarise(_series([20.0, 20.0, 20.0], [0.1, 0.1, 0.1])),
        "memories only" + SESSION_SUFFIX: summarise(_series([21.0, 21.0, 21.0], [1, 1, 1])),
    }
    with_differences(kinds, NEITHER_KIND)
    assert kinds["memories only"]["memory_stage_ms"]["p50"] == 3.0
    assert kinds["memories only"]["memory_parts_p50_ms"]["memory_retrieve"] == 1.5
    assert kinds["memories only"]["memory_parts_p50_ms"]["memory_inject"] == 0.0
    # Per request, then the median: 3/4 of each request's stage.
    assert kinds["memories only"]["memory_without_embedding_ms"]["p50"] == 2.25
    assert kinds["memories only"]["added_p50_ms"] == 3.0
    assert kinds["memories only" + SESSION_SUFFIX]["added_p50_ms"] == 1.0
    assert kinds[NEITHER_KIND]["added_p50_ms"] == 0.0


def _report(misses: dict[str, Any], hits: dict[str, Any]) -> dict[str, Any]:
    return {
        "machine": {"cpu_count": 2},
        "setup": {"knowledge_items": 10, "memories": 5, "requests": 3},
        "backends": {"embedded": {"misses": misses, "hits": hits}},
    }


def test_missing_records_and_other_paths_are_failures_and_the_table_has_every_kind() -> None:
    complete = summarise(_series([1.0, 2.0], [0.5, 0.5]))
    partial = summarise(_series([1.0, 2.0], [0.5, 0.5], recorded=1))
    misses = {NEITHER_KIND: dict(complete), "memories only": dict(partial)}
    with_differences(misses, NEITHER_KIND)
    hits = {NO_USER_HIT: summarise(_series([1.0], [0.0]))}
    report = _report(misses, hits)
    assert failures(report) == [
        "embedded misses memories only: only 1 of 2 decision records read back"
    ]
    wrong = summarise(_series([1.0], [0.0]))
    wrong["wrong_layer"] = 1
    assert len(failures(_report(misses | {NEITHER_KIND: wrong}, hits))) == 2
    failed_open = _series([1.0], [0.0])
    failed_open.records["r0"] = {"stages_ms": {}, "memory_note": "memory_unavailable"}
    assert failures(_report({NEITHER_KIND: summarise(failed_open)}, hits)) == [
        "embedded misses neither (reference): the memory stage failed open 1 times "
        "(forwarded without memory)"
    ]
    table = render(report)
    assert "| memories only | 0.50 | 0.50 | 0.50 | 0.38 | 1.50 | 2.0 |" in table
    assert "| no user | 1.00 | +0.00 | 0.00 | 0.00 |" in table
