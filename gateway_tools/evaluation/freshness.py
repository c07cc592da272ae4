"""`gateway eval freshness`: after an update or delete, is the old content ever injected?

Runs a few hundred changes through the real services (the stores of each backend, the
memory and knowledge services, the memory stage that builds the injected block, the
local embedder, tiktoken) and, after each, asks the question that retrieved the old
content, in a session that had cached it, counting every injection of old content:

- knowledge update: the document is replaced (`POST /v1/knowledge` with its
  `document_id`); the old sentence must be gone and the new one injected;
- knowledge delete: one item (`DELETE /v1/knowledge/{id}`) or a whole document;
- memory delete (`DELETE /v1/memories/{id}`).

Before each change the question is asked once, so the old content is in the session's
knowledge cache (every retrieved item is admitted) and in the reader's prepared index;
after the change it is asked again, and a short follow-up ("ok, go on", which retrieves
nothing itself) checks the session path alone. On Redis the changes are written through
one replica's services and read through another's, each with its own prepared indexes.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.auth import Principal
from gateway.embed.protocol import Embedder
from gateway.knowledge.records import KnowledgeScope
from gateway.knowledge.service import KnowledgeBatch, KnowledgeService, NewKnowledge
from gateway.memory.inject import is_memory_block
from gateway.memory.lifecycle import MemoryLifecycle
from gateway.memory.limits import ModelLimits
from gateway.memory.records import MemoryScope
from gateway.memory.service import MemoryService, NewMemory
from gateway.memory.tokens import Tokenizers
from gateway.pipeline.memory import MemoryStage
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.values import Timings
from gateway.policy.models import Policy
from gateway.settings import StorageSettings
from gateway.storage import open_storage

TENANT = "acme"
USERS = 5
# Every retrieved item is admitted to the session cache: the hardest case for freshness.
POLICY = Policy.model_validate({"memory": {"session": {"admit_min_score": 0.0}}})
_COLOURS = [
    "amber",
    "cobalt",
    "violet",
    "crimson",
    "olive",
    "teal",
    "ivory",
    "scarlet",
    "indigo",
    "saffron",
]
_ANIMALS = [
    "otter",
    "falcon",
    "lynx",
    "heron",
    "badger",
    "sparrow",
    "marten",
    "ibis",
    "gecko",
    "bison",
]
_PLACES = [
    "north lobby",
    "east atrium",
    "roof garden",
    "west wing",
    "loading dock",
    "library",
    "cafe",
]


@dataclass(slots=True)
class Tally:
    changes: Counter[str] = field(default_factory=Counter)
    warm_injected: int = 0  # old content injected before the change (the check's power)
    stale: Counter[str] = field(default_factory=Counter)  # old content injected after
    new_injected: int = 0  # updates: the new sentence injected after the change

    def as_dict(self) -> dict[str, Any]:
        return {
            "changes": dict(self.changes),
            "asked_before_change_and_injected": self.warm_injected,
            "stale_injections": sum(self.stale.values()),
            "stale_by_change": dict(self.stale),
            "updates_injecting_the_new_text": self.new_injected,
        }


@dataclass(frozen=True, slots=True)
class Replica:
    memory: MemoryService
    knowledge: KnowledgeService
    stage: MemoryStage


def _fact(team: str, place: str) -> str:
    return f"The meeting point for team {team} is the {place}."


def _question(team: str) -> str:
    return f"Where is the meeting point for team {team}?"


async def _ask(replica: Replica, text: str, user: str, session: str) -> str:
    """The injected block (empty when none) for one turn of `user` in `session`."""
    body: dict[str, Any] = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": text}],
    }
    request = ChatRequest(
        request_id=uuid.uuid4().hex,
        principal=Principal(TENANT),
        model="gpt-4o-mini",
        body=body,
        policy=POLICY,
        user=user,
        session=session,
    )
    injection = await replica.stage.run(request, Timings())
    messages: list[dict[str, Any]] = (injection.body or body)["messages"]
    return "".join(str(m["content"]) for m in messages if is_memory_block(m))


@asynccontextmanager
async def _replicas(
    backend: str, embedder: Embedder, redis_url: str | None
) -> AsyncIterator[tuple[Replica, Replica]]:
    """A writer and a reader: on Redis two sets of services over one Redis (as two
    replicas), embedded one set (one process)."""
    async with AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        settings = StorageSettings(
            backend="redis" if backend == "redis" else "embedded",
            path=folder,
            redis_url=redis_url,
            redis_prefix=f"fresh{uuid.uuid4().hex[:8]}",
            redis_timeout_seconds=5.0,
        )
        tokenizers = Tokenizers()
        built: list[Replica] = []
        for _ in range(2 if backend == "redis" else 1):
            storage = await open_storage(settings, embedder.name, embedder.dimensions)
            stack.push_async_callback(storage.close)
            memory = MemoryService(storage.memories, storage.sessions, embedder)
            # Its session writes and access counts finish before the store closes.
            stack.push_async_callback(memory.close)
            knowledge = KnowledgeService(storage.knowledge, embedder, tokenizers.for_model(""))
            stage = MemoryStage(memory, tokenizers, ModelLimits({}, {}), knowledge=knowledge)
            built.append(Replica(memory, knowledge, stage))
        yield built[0], built[-1]


async def _one_change(
    writer: Replica, reader: Replica, rng: random.Random, step: int, tally: Tally
) -> None:
    team = f"{rng.choice(_COLOURS)}-{rng.choice(_ANIMALS)}-{step}"
    user, session = f"user-{step % USERS}", f"session-{step % USERS}"
    old_place, new_place = rng.sample(_PLACES, 2)
    old, new = _fact(team, old_place), _fact(team, new_place)
    kind = rng.choice(
        [
            "knowledge_update",
            "knowledge_delete",
            "document_delete",
            "memory_delete",
            "memory_update",
        ]
    )
    knowledge_policy = POLICY.knowledge
    document = f"doc-{step}"
    if kind in ("memory_delete", "memory_update"):
        scope = MemoryScope(TENANT, user)
        (stored,) = await writer.memory.add(scope, [NewMemory(content=old)], POLICY.memory)
    else:
        batch = KnowledgeBatch(KnowledgeScope(TENANT), text=old, document_id=document)
        (item,) = await writer.knowledge.add(batch, knowledge_policy)
    if old in await _ask(reader, _question(team), user, session):
        tally.warm_injected += 1
    if kind == "memory_delete":
        await writer.memory.delete(TENANT, stored.id)
    elif kind == "memory_update":
        # PATCH /v1/memories/{id}: a new version supersedes the old one.
        await MemoryLifecycle(writer.memory).revise(stored, NewMemory(content=new), POLICY.memory)
    elif kind == "knowledge_update":
        batch = KnowledgeBatch(KnowledgeScope(TENANT), text=new, document_id=document)
        await writer.knowledge.add(batch, knowledge_policy)
    elif kind == "knowledge_delete":
        await writer.knowledge.store.delete(TENANT, item.id)
    else:
        await writer.knowledge.store.delete_document(TENANT, document)
    tally.changes[kind] += 1
    after = await _ask(reader, _question(team), user, session)
    follow_up = await _ask(reader, f"ok, go on ({step})", user, session)
    if old in after or old in follow_up:
        tally.stale[kind] += 1
    if kind in ("knowledge_update", "memory_update") and new in after:
        tally.new_injected += 1


async def evaluate_backend(
    backend: str, embedder: Embedder, changes: int, seed: int, redis_url: str | None = None
) -> dict[str, Any]:
    rng = random.Random(seed)
    tally = Tally()
    started = time.perf_counter()
    async with _replicas(backend, embedder, redis_url) as (writer, reader):
        # Unrelated knowledge and memories around the changed items, so that retrieval
        # ranks among many (and the session caches fill up to their capacity).
        background = [
            NewKnowledge(_fact(f"{c}-{a}", rng.choice(_PLACES))) for c in _COLOURS for a in _ANIMALS
        ]
        await writer.knowledge.add(
            KnowledgeBatch(KnowledgeScope(TENANT), items=background), POLICY.knowledge
        )
        for step in range(changes):
            await _one_change(writer, reader, rng, step, tally)
    return {**tally.as_dict(), "seconds": round(time.perf_counter() - started, 1)}


async def _run(backends: Sequence[str], changes: int, seed: int) -> dict[str, Any]:
    from gateway.components import load_local_embedder
    from gateway.testing.redis_server import RedisServer

    embedder = await load_local_embedder()
    results: dict[str, Any] = {"embedder": embedder.name, "changes_per_backend": changes}
    for backend in backends:
        if backend == "redis":
            server = RedisServer().start()
            try:
                results[backend] = await evaluate_backend(
                    backend, embedder, changes, seed, server.url
                )
            finally:
                server.stop()
        else:
            results[backend] = await evaluate_backend(backend, embedder, changes, seed)
    return results


def run_freshness_eval(
    backends: Sequence[str] = ("embedded", "redis"), changes: int = 300, seed: int = 19
) -> int:
    """Prints the tallies; exit status 1 when any old content was injected."""
    results = asyncio.run(_run(backends, changes, seed))
    print(f"embedder {results['embedder']}, {changes} changes per backend, seed {seed}")
    print(
        "| backend | changes | injected before the change | stale injections after | "
        "updates injecting the new text | seconds |"
    )
    print("|---|---|---:|---:|---:|---:|")
    stale = 0
    for backend in backends:
        row = results[backend]
        stale += row["stale_injections"]
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(row["changes"].items()))
        print(
            f"| {backend} | {kinds} | {row['asked_before_change_and_injected']} | "
            f"{row['stale_injections']} | {row['updates_injecting_the_new_text']} | "
            f"{row['seconds']} |"
        )
    return 1 if stale else 0
