"""Structural probes (tests/probes/structural.jsonl) through the real semantic stage.

Each probe is a stored user turn and a new one that carry material (a context, a
document, code, a table, JSON) or attachments (images, audio, files): the same material
with a reworded question (serving is right), or a different question, one edited clause,
line, cell or attachment (serving would be a wrong answer), and planted instructions
that must not reach other users' questions. Each probe is stored and asked in a
namespace of its own, through the exact key and then `SemanticCacheStage` with the real
embedder, embedded index, entity comparison, guard and reviewer: the gateway's own path.

`difference.jsonl` and `paraphrases.jsonl` (same format, plain turns) go through the
same path, each file reported on its own.
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
from gateway.pipeline.judge import StructureGuard
from gateway.pipeline.request import ChatRequest
from gateway.pipeline.semantic import SemanticCacheStage
from gateway.pipeline.values import Hit, Timings
from gateway.policy.models import Policy
from gateway.review.protocol import Reviewer
from gateway.storage.embedded.vectors import EmbeddedVectorIndex

# Every `structural*.jsonl` there: `structural.jsonl` (written with the splitter) and
# `structural_b.jsonl` (written apart from it, first measured as a held-out set).
DEFAULT_STRUCTURAL_PROBES = Path("tests/probes")
# Whole plain turns, same format, evaluated file by file through the same path:
# near misses that differ in one small slot (a function word, an operator, whitespace
# inside material, a role swap...) and meaning-preserving edits, then plain paraphrases.
DIFFERENCE_PROBES = DEFAULT_STRUCTURAL_PROBES / "difference.jsonl"
PARAPHRASE_PROBES = DEFAULT_STRUCTURAL_PROBES / "paraphrases.jsonl"
_EXAMPLE_CHARS = 300  # a false hit's turns, cut to this length in the report
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


def _shown(content: Any) -> str:
    """A turn as a false-hit example shows it: its text, cut short."""
    text = content if isinstance(content, str) else orjson.dumps(content).decode()
    return text if len(text) <= _EXAMPLE_CHARS else text[:_EXAMPLE_CHARS] + "…"


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
    max_examples: int = 20,
) -> dict[str, Any]:
    policy = policy or Policy()
    probes = load_structural_probes(path)
    false_hits: list[dict[str, str]] = []
    served: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    served_languages: Counter[str] = Counter()
    language_totals: Counter[str] = Counter()
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
                language_totals[probe.language] += 1
                served_languages[probe.language] += hit
                outcomes[f"{probe.kind}:{outcome}"] += 1
                served_positives += hit and probe.same_answer
                if hit and not probe.same_answer:
                    false_hits.append(
                        {
                            "id": probe.probe_id,
                            "kind": probe.kind,
                            "outcome": outcome,
                            "stored": _shown(probe.stored),
                            "query": _shown(probe.query),
                        }
                    )
        finally:
            await index.close()
    positives = [p for p in probes if p.same_answer]
    return {
        "probes": len(probes),
        "near_misses": len(probes) - len(positives),
        "false_hits": len(false_hits),
        "false_hit_examples": false_hits[:max_examples],
        "same_answer": len(positives),
        "same_answer_served": served_positives,
        "served": sum(served.values()),
        "served_by_kind": {kind: f"{served[kind]}/{totals[kind]}" for kind in sorted(totals)},
        "served_by_language": {
            language: f"{served_languages[language]}/{language_totals[language]}"
            for language in sorted(language_totals)
        },
        "outcomes": dict(sorted(outcomes.items())),
    }
