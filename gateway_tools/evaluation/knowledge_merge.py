"""`gateway eval knowledge`: what the tenant knowledge base does to the injected block,
measured on LoCoMo (the same data and evidence recall as `gateway eval memory`).

Knowledge and memories are ranked together by score (one ranking, one scale; the
memory stage merges them with `this_turn` and fills the budget best first). Three
set-ups per conversation, each question's block built as the chat pipeline builds it
(no session) under each token budget:

- `memory`: the conversation's turns are the user's memories (the baseline);
- `knowledge`: the same turns are the tenant's knowledge instead;
- `memory + distractors`: the turns are the user's memories and every other
  conversation's turns sit in the tenant's knowledge base, competing for the budget;

each knowledge set-up at `knowledge.retrieve_top_k` 5, 10 (the default) and 15.

gateway eval knowledge --data ../shared/data [--conversations 0-4] [--budgets ...]
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gateway.embed.protocol import Embedder, Vectors
from gateway.knowledge.records import KnowledgeScope
from gateway.knowledge.service import KnowledgeBatch, KnowledgeService, NewKnowledge
from gateway.memory.inject import Counter, build_block
from gateway.memory.records import MemoryScope
from gateway.memory.retrieval import ScoredMemory
from gateway.memory.service import MemoryService
from gateway.memory.session import this_turn
from gateway.memory.text import dedup_key
from gateway.policy.models import Policy
from gateway.storage.embedded.knowledge import SQLiteKnowledgeStore
from gateway.storage.embedded.memory import open_embedded_memory
from gateway_tools.evaluation.memory_recall import (
    LOCOMO_FILE,
    TARGET_MODEL,
    Conversation,
    _fixed_clock,
    ingest,
    load_conversations,
    parse_budgets,
    parse_selection,
)

# `knowledge.retrieve_top_k` values compared (10 is the default).
TOP_KS = (5, 10, 15)
SETUPS = (
    "memory",
    *(f"knowledge top_k {k}" for k in TOP_KS),
    *(f"memory + distractors top_k {k}" for k in TOP_KS),
)


def _stored_as(setup: str) -> str:
    """The tenant whose stored data the set-up ranks (set-ups differing only in
    their top_k share it)."""
    return setup.rsplit(" top_k ", 1)[0]


def _top_k(setup: str) -> int:
    return int(setup.rsplit(" ", 1)[1])


class _CachingEmbedder:
    """Embeds each distinct text once (the distractors are stored five times)."""

    def __init__(self, inner: Embedder) -> None:
        self.name = inner.name
        self.dimensions = inner.dimensions
        self._inner = inner
        self._known: dict[str, Any] = {}

    async def embed(self, texts: list[str]) -> Vectors:
        missing = [text for text in dict.fromkeys(texts) if text not in self._known]
        for start in range(0, len(missing), 64):
            part = missing[start : start + 64]
            for text, vector in zip(part, await self._inner.embed(part), strict=True):
                self._known[text] = vector
        return np.stack([self._known[text] for text in texts]).astype(np.float32)

    def calibrate(self, cosine: float, language: str | None = None) -> float:
        return self._inner.calibrate(cosine, language)

    async def warm_up(self) -> None:
        await self._inner.warm_up()


@dataclass(frozen=True, slots=True)
class _Services:
    memory: MemoryService
    knowledge: KnowledgeService
    policy: Policy
    embedder: Embedder


async def _add_knowledge(services: _Services, tenant: str, turns: Sequence[str]) -> None:
    guarded = services.policy.knowledge.model_copy(update={"write_guard": "quarantine"})
    for start in range(0, len(turns), 100):
        items = [NewKnowledge(text, source="locomo") for text in turns[start : start + 100]]
        await services.knowledge.add(KnowledgeBatch(KnowledgeScope(tenant), items=items), guarded)


async def _ranked(
    services: _Services, setup: str, conversation: Conversation, question: str, vector: Any
) -> list[ScoredMemory]:
    policy = services.policy
    tenant = f"{_stored_as(setup)}-{conversation.index}"
    memories: list[ScoredMemory] = []
    knowledge: list[ScoredMemory] = []
    if setup.startswith("memory"):
        scope = MemoryScope(tenant, "user")
        memories = await services.memory.search(
            scope, question, policy.memory.retrieve_top_k, policy.memory, query_vector=vector
        )
    if setup != "memory":
        knowledge = await services.knowledge.search(
            KnowledgeScope(tenant), question, _top_k(setup), policy.memory.ranking, vector
        )
    return [*memories, *knowledge]


async def _conversation(
    services: _Services,
    conversation: Conversation,
    others: Sequence[Conversation],
    counter: Counter,
    budgets: Sequence[int],
) -> dict[tuple[str, int], list[float]]:
    """Per (set-up, budget), each question's evidence recall."""
    policy = services.policy
    for setup in ("memory", "memory + distractors"):
        await ingest(
            services.memory,
            MemoryScope(f"{setup}-{conversation.index}", "user"),
            conversation,
            policy.memory,
        )
    turns = [turn.content for turn in conversation.turns]
    await _add_knowledge(services, f"knowledge-{conversation.index}", turns)
    distractors = [turn.content for other in others for turn in other.turns]
    await _add_knowledge(services, f"memory + distractors-{conversation.index}", distractors)
    keys = {turn.dia_id: dedup_key(turn.content) for turn in conversation.turns}
    vectors = await services.embedder.embed([q.text for q in conversation.questions])
    recalls: dict[tuple[str, int], list[float]] = {}
    for question, vector in zip(conversation.questions, vectors, strict=True):
        wanted = [keys[dia_id] for dia_id in question.evidence]
        for setup in SETUPS:
            ranked = await _ranked(services, setup, conversation, question.text, vector)
            candidates = this_turn(
                [s for s in ranked if s.record.source != "knowledge"],
                [s for s in ranked if s.record.source == "knowledge"],
            )[: policy.memory.session.inject_top_n]
            for budget in budgets:
                included = {c.key for c in build_block(candidates, counter, budget).included}
                found = sum(1 for key in wanted if key in included)
                recalls.setdefault((setup, budget), []).append(found / len(wanted))
    return recalls


async def _run(path: Path, selection: Sequence[int] | None, budgets: Sequence[int]) -> str:
    from gateway.components import load_local_embedder
    from gateway.memory.tokens import Tokenizers

    conversations = load_conversations(path, selection)
    everyone = load_conversations(path, None)
    embedder = _CachingEmbedder(await load_local_embedder())
    tokenizers = Tokenizers()
    counter = tokenizers.for_model(TARGET_MODEL)
    recalls: dict[tuple[str, int], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="gateway-knowledge-eval-") as folder:
        store, sessions, database = await open_embedded_memory(Path(folder))
        knowledge_store = await SQLiteKnowledgeStore.open(Path(folder))
        try:
            for conversation in conversations:
                clock = _fixed_clock(conversation.now)
                services = _Services(
                    MemoryService(store, sessions, embedder, clock=clock),
                    KnowledgeService(knowledge_store, embedder, tokenizers.for_model(""), clock),
                    Policy(),
                    embedder,
                )
                others = [c for c in everyone if c.index != conversation.index]
                found = await _conversation(services, conversation, others, counter, budgets)
                for cell, values in found.items():
                    recalls.setdefault(cell, []).extend(values)
        finally:
            await knowledge_store.close()
            await database.close()
    questions = len(recalls[(SETUPS[0], budgets[0])])
    lines = [
        f"conversations {[c.index for c in conversations]}, {questions} questions, "
        f"embedder {embedder.name}; mean evidence recall (%) of the injected block",
        "| set-up | " + " | ".join(f"budget {b}" for b in budgets) + " |",
        "|---|" + "---:|" * len(budgets),
    ]
    for setup in SETUPS:
        cells = [100 * sum(recalls[(setup, b)]) / questions for b in budgets]
        lines.append(f"| {setup} | " + " | ".join(f"{value:.1f}" for value in cells) + " |")
    return "\n".join(lines)


def run_knowledge_eval(
    data_dir: Path | None, *, conversations: str | None = None, budgets: str = "256,512,1024"
) -> int:
    path = data_dir / LOCOMO_FILE if data_dir is not None else None
    if path is None or not path.is_file():
        print(f"gateway eval knowledge: --data must name the shared data folder ({LOCOMO_FILE})")
        return 2
    try:
        selection = parse_selection(conversations) if conversations else None
        chosen = parse_budgets(budgets)
    except ValueError as exc:
        print(f"gateway eval knowledge: {exc}")
        return 2
    print(asyncio.run(_run(path, selection, chosen)))
    return 0
