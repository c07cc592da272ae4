"""Structural probes (tests/probes/structural.jsonl) through the real semantic stage.

Each probe is a stored user turn and a new one that carry material (a context, a
document, code, a table, JSON) or attachments (images, audio, files): the same material
with a reworded question (serving is right), or a different question, one edited clause,
line, cell or attachment (serving would be a wrong answer), and planted instructions
that must not reach other users' questions. Each probe is stored and asked in a
namespace of its own, through the exact key and then `SemanticCacheStage` with the real
embedder, embedded index, entity comparison, guard and reviewer: the gateway's own path.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from gateway.auth import Principal
from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.semantic import SemanticCacheStage, StructureGuard
from gateway.pipeline.values import Hit, Timings
from gateway.policy.models import Policy
from gateway.review.protocol import Reviewer
from gateway.storage.embedded.vectors import EmbeddedVectorIndex

# Every `structural*.jsonl` there: `structural.jsonl` (written with the splitter) and
# `structural_b.jsonl` (written apart from it, first measured as a held-out set).
DEFAULT_STRUCTURAL_PROBES = Path("tests/probes")
_SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
_ANSWER: dict[str, Any] = {
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}
    ]
}


@dataclass(frozen=True, slots=True)
class StructuralProbe:
    probe_id: str
    language: str
    kind: str
    stored: Any  # a user message's content: a string or a list of parts
    query: Any
    same_answer: bool


def load_structural_probes(path: Path = DEFAULT_STRUCTURAL_PROBES) -> list[StructuralProbe]:
    """The probes of one file, or of every `structural*.jsonl` in a folder."""
    files = sorted(path.glob("structural*.jsonl")) if path.is_dir() else [path]
    lines = [line for file in files for line in file.read_text(encoding="utf-8").splitlines()]
    probes = []
    for line in lines:
        if not line.strip():
            continue
        row = orjson.loads(line)
        probes.append(
            StructuralProbe(
                probe_id=row["id"],
                language=row["language"],
                kind=row["kind"],
                stored=row["stored"],
                query=row["query"],
                same_answer=bool(row["same_answer"]),
            )
        )
    return probes


def _context(probe: StructuralProbe, content: Any, policy: Policy) -> ChatRequest:
    body = {"model": "probe", "messages": [_SYSTEM, {"role": "user", "content": content}]}
    return ChatRequest(
        request_id=probe.probe_id,
        principal=Principal("probes"),
        model="probe",
        body=body,
        policy=policy,
        namespace=probe.probe_id,  # every probe alone: no other probe's entry can answer
    )


async def evaluate_structural_probes(
    embedder: Embedder,
    comparator: EntityComparator,
    reviewer: Reviewer | None,
    guard: StructureGuard | None = None,
    policy: Policy | None = None,
    path: Path = DEFAULT_STRUCTURAL_PROBES,
) -> dict[str, Any]:
    policy = policy or Policy()
    probes = load_structural_probes(path)
    false_hits: list[dict[str, str]] = []
    served: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    served_positives = 0
    with tempfile.TemporaryDirectory() as workdir:
        index = await EmbeddedVectorIndex.open(Path(workdir), "structural")
        stage = SemanticCacheStage(embedder, index, comparator, reviewer, guard)
        try:
            for probe in probes:
                stored = _context(probe, probe.stored, policy)
                stored_key = stored.exact_key  # the entry's id, as the pipeline stores it
                await stage.store(stored, _ANSWER)
                asked = _context(probe, probe.query, policy)
                if asked.exact_key == stored_key:
                    hit, outcome = True, "exact"
                else:
                    found = await stage.lookup(asked, Timings())
                    hit = isinstance(found, Hit)
                    outcome = "semantic" if isinstance(found, Hit) else str(found.reason)
                totals[probe.kind] += 1
                served[probe.kind] += hit
                outcomes[f"{probe.kind}:{outcome}"] += 1
                served_positives += hit and probe.same_answer
                if hit and not probe.same_answer:
                    false_hits.append({"id": probe.probe_id, "kind": probe.kind})
        finally:
            await index.close()
    positives = [p for p in probes if p.same_answer]
    return {
        "probes": len(probes),
        "near_misses": len(probes) - len(positives),
        "false_hits": len(false_hits),
        "false_hit_examples": false_hits[:20],
        "same_answer": len(positives),
        "same_answer_served": served_positives,
        "served_by_kind": {kind: f"{served[kind]}/{totals[kind]}" for kind in sorted(totals)},
        "outcomes": dict(sorted(outcomes.items())),
    }
