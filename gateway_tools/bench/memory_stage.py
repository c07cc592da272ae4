"""`benchmarks/memory_stage.py`: where the memory stage of a miss spends its
milliseconds, in-process (no HTTP, no other request), at the scale of
`benchmarks/memory_load.py`: one tenant with 10,000 knowledge items, one user in it and
one in a tenant without knowledge with 1,000 memories each; the embedded backend and the
shipped embedder.

The stores are filled through the services (`KnowledgeService.add`,
`MemoryService.add`) with memory_load's corpus. Each question's key text is embedded
once beforehand and handed to the stage as the semantic stage's embedding, so what is
timed is the stage without the embedding (what memory adds to a miss). The kinds take
turns question by question, each kind and round with questions of its own (the search
memos would answer a repeated one), so each run is a miss. Per kind: the stage, and its
`memory_retrieve` and `memory_inject` parts. Per scope: one `rank` of it and its steps,
each timed alone on the same query: the vector product, the signals (cosine and BM25
over the scope), the candidate rows, their relevance features, the model, and what is
left of `rank` (modifiers, the cut, the results). Medians over the questions, in ms.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gateway.auth import Principal
from gateway.embed.local_use import UniversalSentenceEncoder
from gateway.knowledge.records import KnowledgeScope
from gateway.knowledge.service import KnowledgeBatch, KnowledgeService, NewKnowledge
from gateway.memory.candidates import candidate_rows
from gateway.memory.limits import ModelLimits
from gateway.memory.records import MemoryScope
from gateway.memory.relevance import packaged_relevance_model, relevance_features_at
from gateway.memory.retrieval import ScopeIndex, rank, signals
from gateway.memory.service import MemoryService, NewMemory
from gateway.memory.tokens import Tokenizers
from gateway.pipeline.memory import MemoryStage
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.values import QueryEmbedding, Timings
from gateway.policy.models import Policy
from gateway.storage.embedded.knowledge import SQLiteKnowledgeStore
from gateway.storage.embedded.memory import open_embedded_memory
from gateway_tools.bench.constants import MODEL
from gateway_tools.bench.memory_load.corpus import batches, knowledge_texts, memory_texts
from gateway_tools.bench.prompts import MissPrompts
from gateway_tools.bench.report.common import say

TAG = "memory_stage"
KB, PLAIN, FULL, EMPTY = "bench-kb", "bench-plain", "user-full", "user-empty"
# name -> (tenant, user): the miss kinds of memory_load without a session.
KINDS = {
    "memories + knowledge": (KB, FULL),
    "knowledge only": (KB, EMPTY),
    "memories only": (PLAIN, FULL),
}
POLICY = Policy()
# `gateway serve` hands the GIL back to the loop after 0.5 ms (server.gil_switch_interval_ms).
SWITCH_INTERVAL_SECONDS = 0.0005


@dataclass(frozen=True, slots=True)
class StageSetup:
    knowledge_items: int
    memories: int
    questions: int
    rounds: int
    seed: int


@dataclass(frozen=True, slots=True)
class _Parts:
    memory: MemoryService
    knowledge: KnowledgeService
    stage: MemoryStage


def _request(tenant: str, user: str, question: str) -> ChatRequest:
    body = {"model": MODEL, "messages": [{"role": "user", "content": question}]}
    return ChatRequest(uuid.uuid4().hex, Principal(tenant), MODEL, body, POLICY, user=user)


async def _fill(parts: _Parts, setup: StageSetup) -> None:
    rng = random.Random(setup.seed)
    for chunk in batches(knowledge_texts(setup.knowledge_items, rng), 100):
        items = [NewKnowledge(content=text, source="bench") for text in chunk]
        await parts.knowledge.add(KnowledgeBatch(KnowledgeScope(KB), items=items), POLICY.knowledge)
    for tenant in (KB, PLAIN):
        for chunk in batches(memory_texts(setup.memories, rng), 100):
            news = [NewMemory(content=text) for text in chunk]
            await parts.memory.add(MemoryScope(tenant, FULL), news, POLICY.memory)


async def _questions(
    embedder: UniversalSentenceEncoder, prompts: MissPrompts, count: int
) -> list[QueryEmbedding]:
    """`count` new questions' key texts (what memory searches by), each with its vector."""
    keyed: list[QueryEmbedding] = []
    for _ in range(count):
        question = json.loads(prompts.body())["messages"][0]["content"]
        request = _request(KB, EMPTY, question)
        await request.prepare_turn()
        text = request.key_text or question
        keyed.append(QueryEmbedding(text, (await embedder.embed([text]))[0]))
    return keyed


async def _stage_times(
    stage: MemoryStage, questions: dict[str, list[QueryEmbedding]]
) -> dict[str, dict[str, float]]:
    """Per kind, the stage and its parts over its questions, the kinds taking turns."""
    times: dict[str, dict[str, list[float]]] = {kind: defaultdict(list) for kind in KINDS}
    for tenant, user in KINDS.values():  # the scopes indexed, not timed
        await stage.run(_request(tenant, user, "warm up"), Timings())
    for turn in range(len(questions[next(iter(KINDS))])):
        for kind, (tenant, user) in KINDS.items():
            embedding = questions[kind][turn]
            request = _request(tenant, user, embedding.text)
            await request.prepare_turn()
            timings = Timings()
            started = time.perf_counter()
            await stage.run(request, timings, embedding, True)
            times[kind]["stage"].append((time.perf_counter() - started) * 1000)
            for part in ("memory_retrieve", "memory_inject"):
                times[kind][part].append(timings.ms.get(part, 0.0))
    return {kind: _medians(values) for kind, values in times.items()}


def _timed(into: list[float], work: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    started = time.perf_counter()
    result = work(*args, **kwargs)
    into.append((time.perf_counter() - started) * 1000)
    return result


def _rank_steps(index: ScopeIndex, keyed: list[QueryEmbedding], top_k: int) -> dict[str, float]:
    """One scope's `rank` and its steps, each timed alone on each question."""
    times: dict[str, list[float]] = defaultdict(list)
    ranking, model, now = POLICY.memory.ranking, packaged_relevance_model(), time.time()
    assert index.matrix is not None and index.adjacent is not None
    adjacent, rows = index.adjacent, None
    for embedding in keyed:
        text, vector = embedding.text, embedding.vector
        _timed(times["vector product"], np.matmul, index.matrix, vector)
        found = _timed(times["signals (cosine, BM25)"], signals, index, text, vector)
        signal = (found.cosine, found.usable, found.keyword, adjacent)
        rows = _timed(times["candidate rows"], candidate_rows, *signal)
        features = _timed(
            times["relevance features"],
            relevance_features_at,
            rows,
            found.cosine,
            found.keyword,
            found.usable,
            adjacent,
        )
        _timed(times["model"], model.probability, features)
        _timed(
            times["rank (all of it)"],
            rank,
            *(index, text, vector, now, ranking, top_k * 2),
            distinct=top_k,
        )
    result = _medians(times)
    steps = ("signals (cosine, BM25)", "candidate rows", "relevance features", "model")
    result["rest: modifiers, cut, results"] = round(
        result["rank (all of it)"] - sum(result[step] for step in steps), 3
    )
    result["rows scored (the last question)"] = 0.0 if rows is None else float(len(rows))
    return result


def _medians(values: dict[str, list[float]]) -> dict[str, float]:
    return {name: round(statistics.median(series), 3) for name, series in values.items()}


async def run_memory_stage(setup: StageSetup) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="gateway-memory-stage-") as folder:
        store, sessions, database = await open_embedded_memory(Path(folder))
        knowledge_store = await SQLiteKnowledgeStore.open(Path(folder))
        embedder = UniversalSentenceEncoder()
        await embedder.warm_up()
        tokenizers = Tokenizers()
        memory = MemoryService(store, sessions, embedder)
        knowledge = KnowledgeService(knowledge_store, embedder, tokenizers.for_model(""))
        stage = MemoryStage(memory, tokenizers, ModelLimits({}, {}), knowledge=knowledge)
        parts = _Parts(memory, knowledge, stage)
        try:
            started = time.perf_counter()
            await _fill(parts, setup)
            say(f"stores filled in {time.perf_counter() - started:.1f} s", TAG)
            prompts = MissPrompts(random.Random(setup.seed + 1))
            count = setup.questions * setup.rounds
            questions = {kind: await _questions(embedder, prompts, count) for kind in KINDS}
            previous = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
            try:
                stages = await _stage_times(parts.stage, questions)
            finally:
                sys.setswitchinterval(previous)
            knowledge_index = await knowledge.scope_index(KnowledgeScope(KB))
            memory_index = await memory.scope_index(MemoryScope(PLAIN, FULL))
            scopes = {
                f"knowledge ({knowledge_index.size:,} items)": knowledge_index,
                f"memories ({memory_index.size:,})": memory_index,
            }
            top_k = POLICY.memory.retrieve_top_k
            keyed = questions[next(iter(KINDS))]
            ranks = {name: _rank_steps(index, keyed, top_k) for name, index in scopes.items()}
        finally:
            await memory.close()
            await knowledge_store.close()
            await database.close()
            await embedder.close()
    return {"stage": stages, "rank": ranks}


def render(result: dict[str, Any]) -> str:
    lines = ["| kind | stage p50 ms | memory_retrieve | memory_inject |", "|---|---|---|---|"]
    for kind, values in result["stage"].items():
        lines.append(
            f"| {kind} | {values['stage']:.2f} | {values['memory_retrieve']:.2f} "
            f"| {values['memory_inject']:.2f} |"
        )
    names = list(result["rank"])
    lines += ["", "| ranking one scope, p50 ms | " + " | ".join(names) + " |"]
    lines.append("|---|" + "---|" * len(names))
    for step in result["rank"][names[0]]:
        cells = [f"{result['rank'][name][step]:.3f}" for name in names]
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
