"""The adaptive operating point end to end, with the openai client and a fake upstream
whose answers depend on meaning (`fake-meaning`): paraphrases of one question get the
same answer, near misses another.

`observe` reports the hits left on the table and serves nothing differently; `adapt`
serves the paraphrases once the shadow verdicts bound the served precision above the
target, and never a near miss; two replicas on one Redis share the statistics; a
restart keeps them."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.testing.fake_upstream import meaning_answer
from gateway.testing.redis_server import RedisServer
from tests.e2e.browser import dump_dom
from tests.e2e.helpers import client_for
from tests.helpers import ADMIN_KEY, FakeUpstream, GatewayFactory, RunningGateway
from tests.helpers import gateway_config_dict as base_config

MODEL = "fake-meaning"
STORED = ("How long should I boil an egg?", "How do I make a paper airplane?")
# Calibrated similarity to their STORED twin 0.86 and 0.90 with the local embedder:
# below the static 0.97, above the floor 0.80; a content word the embedding settles
# ("minutes", "aeroplane"), and they pass the entity, content-word and structure checks.
PARAPHRASES = ("How many minutes should I boil an egg?", "How do you make a paper aeroplane?")
# Near misses (0.80-0.91): another egg, another way to cook it, another paper object.
# Each has its own answer.
NEAR_MISSES = (
    "How long should I boil a duck egg?",
    "How long should I fry an egg?",
    "How do I make a paper boat?",
)


def _model_list(upstream: FakeUpstream, data_dir: Path) -> list[dict[str, Any]]:
    models: list[dict[str, Any]] = base_config(upstream.url, data_dir)["model_list"]
    meaning = {
        "model_name": MODEL,
        "litellm_params": {
            "model": f"openai/{MODEL}",
            "api_base": f"{upstream.url}/v1",
            "api_key": "sk-upstream-secret-123456",
        },
    }
    return [*models, meaning]


def _start(
    start_gateway: GatewayFactory,
    upstream: FakeUpstream,
    tmp_path: Path,
    adaptive: str,
    data_dir: Path | None = None,
    **overrides: Any,
) -> RunningGateway:
    policies = tmp_path / "policies"
    policies.mkdir(exist_ok=True)
    (policies / "default.yaml").write_text(
        "semantic_cache:\n"
        "  adaptive:\n"
        f"    mode: {adaptive}\n"
        "    sample_rate: 1.0\n"
        "    max_judges_in_flight: 8\n"
    )
    directory = data_dir or tmp_path / "data"
    return start_gateway(
        directory,
        policies_dir=str(policies),
        model_list=_model_list(upstream, directory),
        adaptive={"sync_seconds": 0.2},
        **overrides,
    )


def _ask(
    gateway: RunningGateway, text: str, no_store: bool = False, stream: bool = False
) -> tuple[str, str]:
    headers = {"cache-control": "no-store"} if no_store else {}
    messages: Any = [{"role": "user", "content": text}]
    if stream:
        with client_for(gateway).chat.completions.with_streaming_response.create(
            model=MODEL, messages=messages, extra_headers=headers, stream=True
        ) as response:
            content = "".join(
                chunk.choices[0].delta.content or "" for chunk in response.parse() if chunk.choices
            )
            return response.headers["x-gateway-cache"], content
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model=MODEL, messages=messages, extra_headers=headers
    )
    completion = raw.parse()
    return raw.headers["x-gateway-cache"], completion.choices[0].message.content or ""


def _stats(gateway: RunningGateway) -> dict[str, Any]:
    response = httpx.get(
        f"{gateway.url}/admin/stats", headers={"authorization": f"Bearer {ADMIN_KEY}"}
    )
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    return body


def _acme(gateway: RunningGateway) -> dict[str, Any] | None:
    rows = _stats(gateway)["adaptive"]["tenants"]
    return next((row for row in rows if row["tenant"] == "acme"), None)


def _wait_for(check: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.1)


def _judged(gateway: RunningGateway) -> float:
    row = _acme(gateway)
    return float(row["verdicts"]) if row else 0.0


def test_observe_reports_hits_left_on_the_table_and_serves_nothing_differently(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    gateway = _start(start_gateway, upstream, tmp_path, "observe")
    for text in STORED:
        assert _ask(gateway, text)[0] == "miss"
    # One paraphrase as a stream: judged once its last chunk has been relayed.
    assert _ask(gateway, PARAPHRASES[0], no_store=True)[0] == "miss"
    assert _ask(gateway, PARAPHRASES[1], no_store=True, stream=True)[0] == "miss"
    for text in NEAR_MISSES:
        assert _ask(gateway, text, no_store=True)[0] == "miss"

    def left_on_table() -> bool:
        row = _acme(gateway)
        return row is not None and row["left_on_table"]["hits"] >= 1.9

    _wait_for(left_on_table)
    row = _acme(gateway)
    assert row is not None
    # The two paraphrases were judged servable; the near misses never reached a judge
    # as candidates (the entity and content-word checks refuse them). The duck egg is
    # refused for a name (`named_entity`): a pair known to be different, judged once
    # for the judge's false-accept rate, which is the third judge call.
    assert row["shadow_judged"] == 2 and row["judge"]["calls"] == 3
    _wait_for(lambda: _known_different(gateway, "local") == 1)
    assert row["left_on_table"]["tokens"] > 0
    assert row["mode"] == "observe" and row["threshold"] == row["static_threshold"]
    metrics = httpx.get(
        f"{gateway.url}/metrics", headers={"authorization": f"Bearer {ADMIN_KEY}"}
    ).text
    assert 'gateway_adaptive_left_on_table_hits_total{tenant="acme"}' in metrics
    assert 'gateway_adaptive_threshold{tenant="acme"} 0.97' in metrics
    assert 'gateway_hit_rate_drop_alert{tenant="acme"} 0.0' in metrics
    # Observe never serves from below the static threshold, however much evidence.
    assert _ask(gateway, PARAPHRASES[0], no_store=True)[0] == "miss"


def test_adapt_serves_paraphrases_after_enough_evidence_and_never_a_near_miss(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    gateway = _start(start_gateway, upstream, tmp_path, "adapt")
    for text in STORED:
        assert _ask(gateway, text)[0] == "miss"
    served_after: int | None = None
    for attempt in range(400):
        layer, _ = _ask(gateway, PARAPHRASES[attempt % 2], no_store=True)
        near = NEAR_MISSES[attempt % len(NEAR_MISSES)]
        near_layer, near_answer = _ask(gateway, near, no_store=True)
        # Always forwarded, always its own answer (never a stored neighbour's).
        assert near_layer == "miss" and near_answer == meaning_answer(near)
        if layer == "semantic":
            served_after = attempt
            break
    assert served_after is not None, "adapt never started serving the paraphrases"
    # Not from the first request: only once the verdicts bound the precision.
    assert served_after >= 50
    for text in PARAPHRASES:
        layer, answer = _ask(gateway, text, no_store=True)
        # The stored twin's answer, which is what this paraphrase is answered with.
        assert layer == "semantic" and answer == meaning_answer(text)
    for near in NEAR_MISSES:
        assert _ask(gateway, near, no_store=True)[0] == "miss"
    row = _acme(gateway)
    assert row is not None and row["mode"] == "adapt"
    assert row["threshold"] < row["static_threshold"]
    assert row["threshold"] >= row["floor"]
    assert row["precision_lower95"] >= row["target_precision"]


@pytest.mark.parametrize("storage_backend", ["embedded"], indirect=False)
def test_a_restart_keeps_the_statistics(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    first = _start(start_gateway, upstream, tmp_path, "observe", data_dir)
    for text in STORED:
        _ask(first, text)
    for text in PARAPHRASES:
        _ask(first, text, no_store=True)
    _wait_for(lambda: _judged(first) >= 2)
    before = _acme(first)
    first.server.stop()  # the lifespan writes what is left
    second = _start(start_gateway, upstream, tmp_path, "observe", data_dir)
    after = _acme(second)
    assert after is not None and before is not None
    assert after["verdicts"] == before["verdicts"]
    assert after["left_on_table"] == before["left_on_table"]


@pytest.mark.parametrize("storage_backend", ["redis"], indirect=False)
def test_two_replicas_on_one_redis_share_the_statistics(
    start_gateway: GatewayFactory,
    upstream: FakeUpstream,
    tmp_path: Path,
    redis_server: RedisServer,
) -> None:
    storage = {
        "backend": "redis",
        "redis_url": redis_server.url,
        "redis_prefix": f"adaptive{uuid.uuid4().hex[:10]}",
        "path": str(tmp_path / "data"),
    }
    one = _start(start_gateway, upstream, tmp_path, "observe", tmp_path / "one", storage=storage)
    two = _start(start_gateway, upstream, tmp_path, "observe", tmp_path / "two", storage=storage)
    for text in STORED:
        _ask(one, text)
    for text in PARAPHRASES:
        assert _ask(one, text, no_store=True)[0] == "miss"
    # Judged on the first replica, seen by the second within a sync or two.
    _wait_for(lambda: _judged(two) >= 2)
    # And the second's verdicts add to the first's.
    assert _ask(two, PARAPHRASES[0], no_store=True)[0] == "miss"
    _wait_for(lambda: _judged(one) >= 3)


@pytest.mark.parametrize("storage_backend", ["embedded"], indirect=False)
def test_the_dashboard_shows_the_tenants_operating_point(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    gateway = _start(start_gateway, upstream, tmp_path, "observe")
    for text in STORED:
        _ask(gateway, text)
    for text in PARAPHRASES:
        _ask(gateway, text, no_store=True)
    _wait_for(lambda: _judged(gateway) >= 2)
    dom = dump_dom(f"{gateway.url}/dashboard#key={ADMIN_KEY}", tmp_path / "profile")
    assert dom.body.get("data-state") == "ready", dom.source[-3000:]
    assert dom.row_counts["adaptive"] == dom.table_rows["adaptive"] == 1
    table = dom.source[dom.source.index('id="adaptive"') :]
    table = table[: table.index("</table>")]
    assert "acme" in table and "observe" in table and "local" in table


# Another number than the stored question's: calibrated similarity 1.0 with the local
# embedder (above any threshold), refused by the entity comparison (`number`), and
# answered differently by `fake-meaning` ("Answer: <text>"): pairs known to be different.
WALK = "How many minutes does it take to walk 2 miles?"
WALK_NEAR_MISSES = tuple(
    f"How many minutes does it take to walk {n} miles?" for n in (3, 4, 5, 6, 7)
)
YES_JUDGE = "fake-judge-yes"


def _judge_row(gateway: RunningGateway, judge: str) -> dict[str, Any] | None:
    rows = _stats(gateway)["adaptive"]["judges"]
    return next((row for row in rows if row["judge"] == judge), None)


def _known_different(gateway: RunningGateway, judge: str) -> int:
    row = _judge_row(gateway, judge)
    return int(row["known_different"]) if row else 0


def test_near_misses_with_another_number_are_known_different_pairs_of_the_judge(
    start_gateway: GatewayFactory, upstream: FakeUpstream, tmp_path: Path
) -> None:
    gateway = _start(start_gateway, upstream, tmp_path, "observe")
    assert _ask(gateway, WALK)[0] == "miss"
    for text in WALK_NEAR_MISSES[:3]:
        layer, answer = _ask(gateway, text, no_store=True)
        assert layer == "miss" and answer == meaning_answer(text)
    _wait_for(lambda: _known_different(gateway, "local") >= 3)
    row = _judge_row(gateway, "local")
    assert row is not None
    # The local judge compared the fresh answers with the stored one: all different.
    assert row["known_different"] == 3 and row["known_different_accepted"] == 0
    assert row["known_same"] == 0
    assert 0 < row["false_accept_rate"] < 0.1 and row["false_accept_estimate"] < 0.02
    # They are no evidence about any threshold: nothing in the buckets.
    tenant = _acme(gateway)
    assert tenant is None or tenant["verdicts"] == 0
    metrics = httpx.get(
        f"{gateway.url}/metrics", headers={"authorization": f"Bearer {ADMIN_KEY}"}
    ).text
    assert 'gateway_adaptive_judge_known_pairs_total{judge="local",truth="different"} 3.0' in (
        metrics
    )
    assert (
        'gateway_adaptive_judge_known_pair_errors_total{judge="local",truth="different"} 0.0'
        in (metrics)
    )
    assert 'gateway_adaptive_judge_error_rate{judge="local",kind="false_accept"}' in metrics


def _start_with_yes_judge(
    start_gateway: GatewayFactory,
    upstream: FakeUpstream,
    tmp_path: Path,
    name: str,
    request: pytest.FixtureRequest,
    storage_backend: str,
) -> RunningGateway:
    """`adapt` with the model judge `fake-judge-yes` (it says "same" to every pair), on
    a storage of its own."""
    policies = tmp_path / f"policies-{name}"
    policies.mkdir()
    (policies / "default.yaml").write_text(
        "semantic_cache:\n"
        "  adaptive:\n"
        "    mode: adapt\n"
        "    sample_rate: 1.0\n"
        "    max_judges_in_flight: 8\n"
        "    judge: model\n"
        f"    judge_model: {YES_JUDGE}\n"
        "    judge_tokens_per_minute: 10000000\n"
    )
    directory = tmp_path / f"data-{name}"
    judge = {
        "model_name": YES_JUDGE,
        "litellm_params": {
            "model": f"openai/{YES_JUDGE}",
            "api_base": f"{upstream.url}/v1",
            "api_key": "sk-upstream-secret-123456",
        },
    }
    overrides: dict[str, Any] = {}
    if storage_backend == "redis":
        redis: RedisServer = request.getfixturevalue("redis_server")
        overrides["storage"] = {
            "backend": "redis",
            "redis_url": redis.url,
            "redis_prefix": f"yes{uuid.uuid4().hex[:10]}",
            "path": str(directory),
        }
    return start_gateway(
        directory,
        policies_dir=str(policies),
        model_list=[*_model_list(upstream, directory), judge],
        adaptive={"sync_seconds": 0.2},
        **overrides,
    )


def _paraphrases_until_served(gateway: RunningGateway, attempts: int) -> int | None:
    for attempt in range(attempts):
        if _ask(gateway, PARAPHRASES[attempt % 2], no_store=True)[0] == "semantic":
            return attempt
    return None


def test_a_judge_that_accepts_known_different_pairs_cannot_lower_the_threshold(
    start_gateway: GatewayFactory,
    upstream: FakeUpstream,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    storage_backend: str,
) -> None:
    # Alone, the always-yes verdicts on the paraphrases lower the threshold.
    control = _start_with_yes_judge(
        start_gateway, upstream, tmp_path, "control", request, storage_backend
    )
    for text in STORED:
        _ask(control, text)
    served_after = _paraphrases_until_served(control, 400)
    assert served_after is not None, "the always-yes verdicts alone never lowered it"
    # The same judge, once it has said "same" to pairs known to be different.
    gateway = _start_with_yes_judge(
        start_gateway, upstream, tmp_path, "measured", request, storage_backend
    )
    for text in (*STORED, WALK):
        _ask(gateway, text)
    sent = 0
    while _known_different(gateway, f"model:{YES_JUDGE}") < 80:
        assert sent < 300, "the near misses were not judged"
        near = WALK_NEAR_MISSES[sent % len(WALK_NEAR_MISSES)]
        assert _ask(gateway, near, no_store=True)[0] == "miss"
        sent += 1
        if sent % 20 == 0:
            time.sleep(0.2)  # let the judgments in flight finish
    row = _judge_row(gateway, f"model:{YES_JUDGE}")
    assert row is not None
    assert row["known_different_accepted"] == row["known_different"]
    assert row["false_accept_rate"] > 0.6
    # Twice the paraphrases that sufficed alone: still not served, threshold unmoved.
    assert _paraphrases_until_served(gateway, 2 * served_after + 20) is None
    tenant = _acme(gateway)
    assert tenant is not None and tenant["threshold"] == tenant["static_threshold"]
    assert tenant["verdicts"] > served_after  # the verdicts were counted, for little
