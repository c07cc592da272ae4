"""The semantic stage embeds each (tenant, ask) once: a repeated paraphrase is served
without a second forward pass, and nothing is reused across tenants or texts."""

from __future__ import annotations

import dataclasses

from gateway.auth import Principal
from gateway.embed.memo import EmbeddingMemo
from gateway.pipeline.reasons import Layer, Reason
from gateway.pipeline.semantic import SemanticCacheStage
from gateway.pipeline.values import Hit, Timings
from gateway.testing.fakes import TableEmbedder
from tests.unit.test_semantic_stage import (
    COMPLETION,
    MemoryIndex,
    ScriptedEmbedder,
    StubComparator,
    _ctx,
)

STORED = "stored question"
PARAPHRASE = "paraphrased question"
OTHER = "unrelated question"


def _embedder() -> TableEmbedder:
    # The paraphrase scores 0.95 against the stored question (above the test band).
    return TableEmbedder({STORED: [1.0, 0.0], PARAPHRASE: [0.95, 0.3122499], OTHER: [0.0, 1.0]})


def _stage(embedder: TableEmbedder, memo: EmbeddingMemo | None = None) -> SemanticCacheStage:
    return SemanticCacheStage(embedder, MemoryIndex(), StubComparator(), None, memo=memo)  # type: ignore[arg-type]


async def test_a_repeated_ask_is_embedded_once_and_still_served() -> None:
    embedder = _embedder()
    stage = _stage(embedder)
    await stage.store(_ctx(STORED), COMPLETION)
    first = await stage.lookup(_ctx(PARAPHRASE), Timings())
    second = await stage.lookup(_ctx(PARAPHRASE), Timings())
    assert isinstance(first, Hit) and first.layer is Layer.SEMANTIC
    assert isinstance(second, Hit) and second.layer is Layer.SEMANTIC
    assert second.diagnostics.similarity == first.diagnostics.similarity
    assert embedder.embedded.count(PARAPHRASE) == 1


async def test_another_tenant_or_another_text_is_embedded_again() -> None:
    embedder = _embedder()
    stage = _stage(embedder)
    await stage.lookup(_ctx(PARAPHRASE), Timings())
    other_tenant = dataclasses.replace(_ctx(PARAPHRASE), principal=Principal("globex"))
    await stage.lookup(other_tenant, Timings())
    assert embedder.embedded.count(PARAPHRASE) == 2
    found = await stage.lookup(_ctx(OTHER), Timings())
    assert embedder.embedded.count(OTHER) == 1
    # The other text got its own vector, not the memoised paraphrase's.
    assert not isinstance(found, Hit)
    assert found.query_embedding is not None
    assert found.query_embedding.vector.tolist() == embedder.vector(OTHER).tolist()


async def test_a_turned_off_memo_embeds_every_time() -> None:
    embedder = _embedder()
    stage = _stage(embedder, EmbeddingMemo(max_entries=0))
    await stage.lookup(_ctx(PARAPHRASE), Timings())
    await stage.lookup(_ctx(PARAPHRASE), Timings())
    assert embedder.embedded.count(PARAPHRASE) == 2


async def test_a_failed_embedding_is_not_memoised() -> None:
    embedder = ScriptedEmbedder()
    stage = SemanticCacheStage(embedder, MemoryIndex(), StubComparator(), None)  # type: ignore[arg-type]
    embedder.fail = True
    failed = await stage.lookup(_ctx(PARAPHRASE), Timings())
    assert not isinstance(failed, Hit) and failed.reason is Reason.EMBEDDER_UNAVAILABLE
    embedder.fail = False
    found = await stage.lookup(_ctx(PARAPHRASE), Timings())
    assert not isinstance(found, Hit) and found.reason is Reason.NO_CANDIDATE
    assert found.query_embedding is not None
