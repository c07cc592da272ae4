"""The semantic stage's decision rule with in-process fakes behind the project's
protocols: a scripted embedder (controls the cosine), a scripted reviewer, an in-memory
index, and a comparator stub."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from gateway.auth import Principal
from gateway.difference.analysis import Difference
from gateway.entities.entities import EntityVerdict, Mismatch
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.semantic import SemanticCacheStage
from gateway.pipeline.values import Hit, Lookup, Timings
from gateway.policy.models import Policy
from gateway.review.protocol import ReviewVerdict
from gateway.storage.protocols import SemanticEntry

# The default policy serves at its target precision and has no review band; these tests
# exercise the band, so they open one (the scripted embedder's scale is the identity).
BAND = {
    "accept_threshold": 0.92,
    "review_min_similarity": 0.85,
    "review": {"band_floor": 0.85},
}
BAND_POLICY = Policy.model_validate({"semantic_cache": BAND})


class ScriptedEmbedder:
    """Vectors chosen so that cos(query, stored) is whatever the test sets."""

    name = "scripted"
    dimensions = 2

    def __init__(self) -> None:
        self.cosine_to_stored = 1.0
        self.fail = False

    async def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if self.fail:
            raise RuntimeError("embedder down")
        vectors = []
        for text in texts:
            if text.startswith("stored"):
                vectors.append([1.0, 0.0])
            else:
                c = self.cosine_to_stored
                vectors.append([c, float(np.sqrt(max(0.0, 1 - c * c)))])
        return np.array(vectors, dtype=np.float32)

    def calibrate(self, cosine: float, language: str | None = None) -> float:
        return cosine

    async def warm_up(self) -> None:
        return None


class MemoryIndex:
    def __init__(self) -> None:
        self.rows: list[tuple[SemanticEntry, npt.NDArray[np.float32]]] = []

    async def add(self, entry: SemanticEntry, vector: npt.NDArray[np.float32]) -> None:
        self.rows.append((entry, vector))

    async def search(
        self, fingerprint: str, vector: npt.NDArray[np.float32], top_k: int
    ) -> list[tuple[SemanticEntry, float]]:
        scored = [
            (e, float(np.dot(v, vector))) for e, v in self.rows if e.fingerprint == fingerprint
        ]
        return sorted(scored, key=lambda item: -item[1])[:top_k]

    async def count(self) -> int:
        return len(self.rows)

    def touch(self, entry_id: str) -> None:
        return None

    async def ping(self) -> bool:
        return True

    async def close(self) -> None:
        return None


class StubComparator:
    def __init__(self) -> None:
        self.mismatch = False

    def content_changes(self, query: str, candidate: str) -> tuple[str, ...]:
        return ()

    def difference(self, query: str, candidate: str, context: str = "") -> Difference:
        # A content word the lexicon does not know: the embedding and the checks decide.
        return Difference((), (), ("word",), changed_tokens=2)

    def compare(self, query: str, candidate: str) -> EntityVerdict:
        if self.mismatch:
            return EntityVerdict(mismatches=(Mismatch("number", "3", "4"),))
        return EntityVerdict(mismatches=())


@dataclass
class ScriptedReviewer:
    name: str = "scripted"
    kind: str = "model"  # a chat model's stand-in: it is sent the review band
    answer: bool | None = True  # None: raise
    delay_seconds: float = 0.0
    calls: int = 0
    answers_seen: list[str | None] = field(default_factory=list)

    async def review(
        self,
        query: str,
        candidate: str,
        similarity: float,
        stored_answer: str | None = None,
        *,
        tenant: str | None = None,
        budget_tokens: int | None = None,
    ) -> ReviewVerdict:
        self.calls += 1
        self.answers_seen.append(stored_answer)
        await asyncio.sleep(self.delay_seconds)
        if self.answer is None:
            raise RuntimeError("reviewer down")
        return ReviewVerdict(same_meaning=self.answer, score=float(self.answer), reviewer=self.name)


COMPLETION: dict[str, Any] = {
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Paris"}, "finish_reason": "stop"}
    ],
}


def _ctx(text: str, system: str = "Be brief.") -> ChatRequest:
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": text}],
    }
    return ChatRequest(
        request_id="r", principal=Principal("acme"), model="m", body=body, policy=BAND_POLICY
    )


@pytest.fixture
def parts() -> tuple[SemanticCacheStage, ScriptedEmbedder, StubComparator, ScriptedReviewer]:
    embedder, comparator, reviewer = ScriptedEmbedder(), StubComparator(), ScriptedReviewer()
    stage = SemanticCacheStage(embedder, MemoryIndex(), comparator, reviewer)  # type: ignore[arg-type]
    return stage, embedder, comparator, reviewer


def _layer(found: Lookup) -> Layer:
    return found.layer if isinstance(found, Hit) else Layer.MISS


def _reason(found: Lookup) -> Reason | None:
    return None if isinstance(found, Hit) else found.reason


async def _stored(stage: SemanticCacheStage) -> None:
    await stage.store(_ctx("stored question"), COMPLETION)


@pytest.mark.parametrize(
    ("cosine", "review_answer", "layer", "reason", "reviewed"),
    [
        (0.95, True, Layer.SEMANTIC, None, False),  # above the band: no review needed
        (0.88, True, Layer.SEMANTIC, None, True),  # in the band, reviewer accepts
        (0.88, False, Layer.MISS, Reason.REVIEW_REJECTED, True),
        (0.88, None, Layer.MISS, Reason.REVIEW_UNAVAILABLE, True),
        (0.80, True, Layer.MISS, Reason.BELOW_THRESHOLD, False),
    ],
)
async def test_band_decisions(
    parts: tuple[SemanticCacheStage, ScriptedEmbedder, StubComparator, ScriptedReviewer],
    cosine: float,
    review_answer: bool | None,
    layer: Layer,
    reason: Reason | None,
    reviewed: bool,
) -> None:
    stage, embedder, _, reviewer = parts
    await _stored(stage)
    embedder.cosine_to_stored = cosine
    reviewer.answer = review_answer
    found = await stage.lookup(_ctx("new question"), Timings())
    assert isinstance(found, Hit) == (layer is Layer.SEMANTIC)
    assert _layer(found) is layer and _reason(found) is reason
    assert (reviewer.calls > 0) == reviewed
    assert found.diagnostics.similarity == pytest.approx(cosine, abs=1e-4)


async def test_entity_mismatch_rejects_even_above_the_band(
    parts: tuple[SemanticCacheStage, ScriptedEmbedder, StubComparator, ScriptedReviewer],
) -> None:
    stage, embedder, comparator, reviewer = parts
    await _stored(stage)
    embedder.cosine_to_stored, comparator.mismatch = 0.99, True
    found = await stage.lookup(_ctx("new question"), Timings())
    assert (_layer(found), _reason(found), found.diagnostics.mismatch_kinds) == (
        Layer.MISS,
        Reason.ENTITY_MISMATCH,
        ("number",),
    )
    assert reviewer.calls == 0


async def test_slow_reviewer_times_out_as_unavailable(
    parts: tuple[SemanticCacheStage, ScriptedEmbedder, StubComparator, ScriptedReviewer],
) -> None:
    stage, embedder, _, reviewer = parts
    await _stored(stage)
    embedder.cosine_to_stored, reviewer.delay_seconds = 0.88, 5.0
    ctx = dataclasses.replace(
        _ctx("new question"),
        policy=Policy.model_validate(
            {"semantic_cache": {**BAND, "review": {"timeout_seconds": 0.05}}}
        ),
    )
    found = await stage.lookup(ctx, Timings())
    assert not isinstance(found, Hit)
    assert found.reason is Reason.REVIEW_UNAVAILABLE
    assert found.diagnostics.review_verdict == "unavailable"


async def test_other_system_prompt_or_tenant_has_no_candidate(
    parts: tuple[SemanticCacheStage, ScriptedEmbedder, StubComparator, ScriptedReviewer],
) -> None:
    stage, *_ = parts
    await _stored(stage)
    other_prompt = _ctx("new question", system="Be verbose.")
    found = await stage.lookup(other_prompt, Timings())
    assert _reason(found) is Reason.NO_CANDIDATE
    other_tenant = dataclasses.replace(_ctx("new question"), principal=Principal("globex"))
    found = await stage.lookup(other_tenant, Timings())
    assert _reason(found) is Reason.NO_CANDIDATE


async def test_embedder_failure_is_a_miss_with_a_reason(
    parts: tuple[SemanticCacheStage, ScriptedEmbedder, StubComparator, ScriptedReviewer],
) -> None:
    stage, embedder, *_ = parts
    await _stored(stage)
    embedder.fail = True
    found = await stage.lookup(_ctx("new question"), Timings())
    assert _reason(found) is Reason.EMBEDDER_UNAVAILABLE


@pytest.mark.parametrize(
    ("query", "candidate", "accepted"),
    [
        ("How can I sort a list in Python?", "How do I sort a list in Python?", True),
        ("Does the cat chase the dog?", "Does the dog chase the cat?", False),
        ("Why did YouTube acquire Google?", "Why did Google acquire YouTube?", False),
        ("中国的首都是哪个城市", "中国的首都是哪个城市？", True),
    ],
)
async def test_review_band_with_the_real_local_reviewer(
    query: str, candidate: str, accepted: bool
) -> None:
    from gateway.pipeline.judge import judge_candidate
    from gateway.review.local import LocalPairReviewer

    decision = await judge_candidate(
        query,
        candidate,
        0.88,
        BAND_POLICY.semantic_cache,
        StubComparator(),
        LocalPairReviewer.load(),
    )
    assert decision.accepted is accepted
    assert decision.review_verdict == ("accepted" if accepted else "rejected")


async def test_structure_guard_vets_candidates_above_the_band() -> None:
    from gateway.pipeline.judge import judge_candidate
    from gateway.review.local import LocalPairReviewer

    guard = LocalPairReviewer.load()
    policy = BAND_POLICY.semantic_cache
    swapped = await judge_candidate(
        "Why did YouTube acquire Google?",
        "Why did Google acquire YouTube?",
        0.97,
        policy,
        StubComparator(),
        None,
        guard,
    )
    assert not swapped.accepted and swapped.reason is Reason.REVIEW_REJECTED
    same = await judge_candidate(
        "How can I sort a list in Python?",
        "How do I sort a list in Python?",
        0.97,
        policy,
        StubComparator(),
        None,
        guard,
    )
    assert same.accepted


@pytest.mark.parametrize("show", [True, False])
async def test_the_reviewer_sees_the_stored_answer_when_the_policy_shows_it(
    parts: tuple[SemanticCacheStage, ScriptedEmbedder, StubComparator, ScriptedReviewer],
    show: bool,
) -> None:
    stage, embedder, _, reviewer = parts
    await _stored(stage)
    embedder.cosine_to_stored = 0.88
    ctx = dataclasses.replace(
        _ctx("new question"),
        policy=Policy.model_validate(
            {"semantic_cache": {**BAND, "review": {"show_stored_answer": show}}}
        ),
    )
    await stage.lookup(ctx, Timings())
    assert reviewer.answers_seen == ["Paris" if show else None]
