"""The semantic decision seen from the openai client over HTTP, on both backends: a
sample of the difference probes (tests/probes/difference.jsonl) is never served the
other request's answer; rewordings are, with honest headers."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from tests.e2e.helpers import client_for
from tests.helpers import RunningGateway

PROBES = Path(__file__).resolve().parents[1] / "probes"


def _sample(name: str, per_kind: int) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (PROBES / name).read_text("utf-8").splitlines() if line]
    rows.sort(key=lambda row: (row["kind"], row["language"]))
    sample = []
    for _, group in itertools.groupby(rows, key=lambda row: (row["kind"], row["language"])):
        sample.extend(list(group)[:per_kind])
    return sample


def _ask(gateway: RunningGateway, system: str, text: str) -> Any:
    raw = client_for(gateway).chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": text}],
    )
    return raw.headers


def test_no_difference_probe_is_served_over_http(gateway: RunningGateway) -> None:
    served = []
    for row in _sample("difference.jsonl", per_kind=2):
        system = f"Probe {row['id']}: answer briefly."  # every pair on its own
        _ask(gateway, system, row["stored"])
        headers = _ask(gateway, system, row["query"])
        if headers["x-gateway-cache"] in ("semantic", "exact") and not row["same_answer"]:
            served.append((row["id"], headers.get("x-gateway-difference")))
    assert served == []


def test_rewordings_are_served_with_what_differed(gateway: RunningGateway) -> None:
    pairs = [
        ("Explain HTTP caching in one sentence", "Explain HTTP caching in a single sentence"),
        ("What is the tallest mountain on Earth?", "Which mountain is the tallest on Earth?"),
        ("Why is the sky blue?", "Why does the sky look blue?"),
        ("什么是区块链？", "区块链是什么？"),
    ]
    for index, (stored, asked) in enumerate(pairs):
        system = f"Rewording {index}: answer briefly."
        _ask(gateway, system, stored)
        headers = _ask(gateway, system, asked)
        assert headers["x-gateway-cache"] == "semantic", (asked, headers)
        # The raw cosine and the calibrated estimate each have a header of their own.
        raw, calibrated = (
            float(headers["x-gateway-similarity"]),
            float(headers["x-gateway-calibrated-similarity"]),
        )
        assert 0.0 < raw <= 1.0 and 0.0 < calibrated <= 1.0
        assert headers["x-gateway-difference"] not in ("", "content")
