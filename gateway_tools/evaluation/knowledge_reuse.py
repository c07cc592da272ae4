"""`gateway eval knowledge-reuse`: how often a knowledge-answered question is reused,
and whether a reuse is ever wrong, over one knowledge snapshot.

A real `gateway serve` process (the shipped embedder, classifier and entity comparison;
embedded storage, or Redis with `--backend redis`) in front of the fake upstream, driven
over HTTP. The tenant's knowledge base is the snapshot of `knowledge_reuse_sets.py`;
requests name no user, so only tenant knowledge is injected. The four sets are asked in
order (first_seen, paraphrase, other_condition, then after_change once the items the
first questions depend on were replaced through `POST /v1/knowledge`).

Which question an answer belongs to: the fake upstream numbers its answers
("Answer #N: ..."); each answer the upstream wrote is noted with the question it was
written for and whether it was written before the change. A served answer (exact or
semantic hit) is a false reuse when it was written for another question (another topic
or condition), or, in after_change, before the change.

Run three times: with the default policy (`knowledge.cache_answers: true`), with
`knowledge.cache_answers: false` (the baseline: every knowledge answer bypasses), and,
for reference, with no knowledge at all (what the semantic cache alone reuses of the
same questions; in it after_change is only a repeat).
"""

from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from gateway_tools.bench.constants import MODEL, TENANT_KEY
from gateway_tools.evaluation.knowledge_reuse_sets import SETS, Question, questions, snapshot
from gateway_tools.evaluation.pairs import wilson_interval

_ANSWER_NUMBER = re.compile(r"Answer #(\d+)")
_HIT_LAYERS = frozenset({"exact", "semantic"})


def policy_yaml(cache_answers: bool) -> str:
    # Tenant keys may write knowledge here: the eval has no admin key.
    return (
        f"knowledge:\n  writers: any_key\n  cache_answers: {'true' if cache_answers else 'false'}\n"
    )


@dataclass(frozen=True, slots=True)
class _Written:
    qid: str
    before_change: bool


@dataclass(slots=True)
class SetTally:
    requests: int = 0
    exact: int = 0
    semantic: int = 0
    false_reuse: int = 0
    errors: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)

    def report(self) -> dict[str, Any]:
        reused = self.exact + self.semantic
        _, upper = wilson_interval(self.false_reuse, self.requests)
        return {
            "requests": self.requests,
            "exact": self.exact,
            "semantic": self.semantic,
            "reuse_rate": _ratio(reused, self.requests),
            "false_reuse": self.false_reuse,
            "false_reuse_rate": _ratio(self.false_reuse, self.requests),
            "false_reuse_wilson95_upper": round(upper, 4),
            "errors": self.errors,
            "p50_ms": _percentile(self.latencies_ms, 50),
            "p95_ms": _percentile(self.latencies_ms, 95),
            "reasons": dict(self.reasons.most_common()),
        }


class ReuseRun:
    """One pass over the four sets against a running gateway at `base_url`."""

    def __init__(self, base_url: str) -> None:
        self._client = httpx.Client(
            base_url=base_url,
            headers={"authorization": f"Bearer {TENANT_KEY}"},
            timeout=60,
        )
        self._written: dict[int, _Written] = {}
        self._changed = False

    def close(self) -> None:
        self._client.close()

    def load_snapshot(self) -> int:
        items = snapshot()
        for item in items:
            self._write(item.document_id, item.content)
        return len(items)

    def change_knowledge(self) -> int:
        """Replaces each item a first_seen question depends on (its document)."""
        changed = 0
        for item in snapshot():
            if item.changed_content is not None:
                self._write(item.document_id, item.changed_content)
                changed += 1
        self._changed = True
        return changed

    def ask_set(self, set_name: str) -> SetTally:
        tally = SetTally()
        for question in questions(set_name):
            self._ask(question, tally)
        return tally

    def _write(self, document_id: str, content: str) -> None:
        response = self._client.post(
            "/v1/knowledge", json={"document_id": document_id, "content": content}
        )
        if response.status_code != 201:
            raise RuntimeError(f"knowledge write failed: HTTP {response.status_code}")

    def _ask(self, question: Question, tally: SetTally) -> None:
        body = {"model": MODEL, "messages": [{"role": "user", "content": question.text}]}
        started = time.perf_counter()
        response = self._client.post("/v1/chat/completions", json=body)
        elapsed_ms = (time.perf_counter() - started) * 1000
        tally.requests += 1
        if response.status_code != 200:
            tally.errors += 1
            return
        tally.latencies_ms.append(elapsed_ms)
        layer = response.headers.get("x-gateway-cache", "")
        reason = response.headers.get("x-gateway-cache-reason", "")
        tally.reasons[f"{layer}:{reason}" if reason else layer] += 1
        content = response.json()["choices"][0]["message"].get("content") or ""
        found = _ANSWER_NUMBER.search(content)
        number = int(found.group(1)) if found else -1
        if layer not in _HIT_LAYERS:
            self._written[number] = _Written(question.qid, not self._changed)
            return
        if layer == "exact":
            tally.exact += 1
        else:
            tally.semantic += 1
        written = self._written.get(number)
        if written is None or written.qid != question.qid or self._stale(question, written):
            tally.false_reuse += 1

    def _stale(self, question: Question, written: _Written) -> bool:
        # After the change every question asked depends on a replaced item.
        return self._changed and question.set_name == "after_change" and written.before_change


def measure(base_url: str, with_knowledge: bool = True) -> dict[str, Any]:
    """The four sets' tallies, against a ready gateway with an empty tenant; without
    knowledge (the reference: the semantic cache alone), nothing is loaded or changed."""
    run = ReuseRun(base_url)
    try:
        items = run.load_snapshot() if with_knowledge else 0
        sets: dict[str, Any] = {"changed_items": 0}
        for set_name in SETS:
            if set_name == "after_change" and with_knowledge:
                sets["changed_items"] = run.change_knowledge()
            sets[set_name] = run.ask_set(set_name).report()
        return {"items": items, **sets}
    finally:
        run.close()


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _percentile(values: list[float], percent: int, digits: int = 1) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], digits)
    return round(statistics.quantiles(values, n=100, method="inclusive")[percent - 1], digits)
