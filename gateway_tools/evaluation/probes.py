"""The hand-written probe suite (tests/probes/*.tsv) through the real decision rule.

Each probe is a (query, candidate) pair: a true paraphrase or a near miss that differs in
one slot (number, date, entity, negation, tier...). The candidate is treated as the stored
request; a near miss that would be served is a false hit.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.nlp import detect_language
from gateway.pipeline.judge import StructureGuard, judge_candidate
from gateway.policy.models import SemanticCachePolicy
from gateway.review.protocol import Reviewer

DEFAULT_PROBE_DIR = Path("tests/probes")


@dataclass(frozen=True, slots=True)
class Probe:
    kind: str
    query: str
    candidate: str
    same_meaning: bool
    language: str


def load_probes(directory: Path = DEFAULT_PROBE_DIR) -> list[Probe]:
    probes = []
    for path in sorted(directory.glob("probes_*.tsv")):
        language = path.stem.removeprefix("probes_")
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
                probes.append(
                    Probe(
                        kind=row["kind"],
                        query=row["query"],
                        candidate=row["candidate"],
                        same_meaning=row["same_meaning"].strip() == "1",
                        language=language,
                    )
                )
    return probes


async def evaluate_probes(
    embedder: Embedder,
    comparator: EntityComparator,
    reviewer: Reviewer | None,
    policy: SemanticCachePolicy,
    guard: StructureGuard | None = None,
    directory: Path = DEFAULT_PROBE_DIR,
) -> dict[str, Any]:
    probes = load_probes(directory)
    queries = await embedder.embed([p.query for p in probes])
    candidates = await embedder.embed([p.candidate for p in probes])
    cosines = np.einsum("ij,ij->i", queries, candidates)
    false_hits: list[dict[str, str]] = []
    served_paraphrases = 0
    rejected_by: Counter[str] = Counter()
    for probe, cosine in zip(probes, cosines, strict=True):
        decision = await judge_candidate(
            probe.query,
            probe.candidate,
            embedder.calibrate(float(cosine), detect_language(probe.query)),
            policy,
            comparator,
            reviewer,
            guard,
        )
        if decision.accepted and not probe.same_meaning:
            false_hits.append(
                {"kind": probe.kind, "query": probe.query, "candidate": probe.candidate}
            )
        if decision.accepted and probe.same_meaning:
            served_paraphrases += 1
        if not decision.accepted and decision.reason is not None:
            rejected_by[f"{probe.kind}:{decision.reason.value}"] += 1
    paraphrases = sum(p.same_meaning for p in probes)
    return {
        "probes": len(probes),
        "near_misses": len(probes) - paraphrases,
        "false_hits": len(false_hits),
        "false_hit_examples": false_hits[:20],
        "paraphrases": paraphrases,
        "paraphrases_served": served_paraphrases,
        "rejected_by": dict(rejected_by),
    }
