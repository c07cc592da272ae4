"""Fit the memory relevance model (P(evidence) per retrieved memory) on LoCoMo.

    python -m gateway_tools.training.fit_memory_relevance --data ../shared/data \\
        --out gateway/memory/models/memory-relevance-v1.json

Every turn of each conversation is stored as one memory of one user, as `gateway eval
memory` does; each question's per-memory features (`gateway.memory.relevance`) are
computed over the whole conversation, labelled 1 for the question's evidence turns
(and turns repeating their text) and 0 for every other turn. The model is fitted on
conversations 0-2 only (`--train`) and reported on 3-4 (`--held-out`): Brier score, a
reliability table, and the share of evidence and of other memories at or above each
floor. Only weights and metrics are written, never data.

Logistic regression with a small L2 penalty, fitted by Newton's method in numpy.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gateway.embed.protocol import Embedder
from gateway.memory.records import MemoryScope
from gateway.memory.relevance import FEATURE_NAMES, RelevanceModel, relevance_features
from gateway.memory.retrieval import ScopeIndex, TermCache, signals
from gateway.memory.service import MemoryService
from gateway.memory.text import dedup_key
from gateway.policy.memory import MemoryPolicy
from gateway.storage.embedded.memory import open_embedded_memory
from gateway_tools.evaluation.memory_recall import (
    EMBED_BATCH,
    LOCOMO_FILE,
    TENANT,
    Conversation,
    embed_in_batches,
    ingest,
    load_conversations,
    parse_selection,
)

Floats = npt.NDArray[np.float64]
L2_PENALTY = 1.0
FLOORS = (0.3, 0.5, 0.7, 0.9)
# Scope sizes fitted next to the whole conversations: users hold from a handful of
# memories to thousands, and how many compete changes what a best match means.
SUB_SCOPE_SIZES = (3, 5, 10, 20, 50, 100, 200)
# Each question's smaller scopes together count about twice its whole conversation
# (0.3 x 7 sizes): enough to learn what a best match means among few memories, not so
# much that the many easy small scopes decide the ranking of large ones.
SUB_SCOPE_WEIGHT = 0.3
SEED = 19
_TERMS = TermCache()
# The session cache's default admission (SessionMemoryPolicy), reported on held-out data.
ADMIT_FLOOR = 0.70
ADMIT_TOP_K = 3
ADMIT_MIN_SHARED_TERMS = 2
RELIABILITY_EDGES = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0001)


@dataclass(frozen=True, slots=True)
class QuestionRows:
    conversation: int
    scope_size: int
    features: Floats  # (memories, features)
    labels: npt.NDArray[np.bool_]
    shared_terms: npt.NDArray[np.int64]


async def conversation_rows(
    service: MemoryService,
    embedder: Embedder,
    conversation: Conversation,
    sizes: Sequence[int],
    rng: np.random.Generator,
) -> list[QuestionRows]:
    """Rows of each question over the whole conversation, and over one smaller scope of
    each of `sizes` (see `_sub_scope`)."""
    scope = MemoryScope(TENANT, f"conversation-{conversation.index}")
    await ingest(service, scope, conversation, MemoryPolicy())
    index = await service.scope_index(scope)
    key_of = {str(r.metadata["dia_id"]): dedup_key(r.content) for r in index.records}
    row_keys = [dedup_key(record.content) for record in index.records]
    vectors = await embed_in_batches(
        embedder, [question.text for question in conversation.questions], EMBED_BATCH
    )
    rows: list[QuestionRows] = []
    for question, vector in zip(conversation.questions, vectors, strict=True):
        wanted = {key_of[dia_id] for dia_id in question.evidence if dia_id in key_of}
        labels = np.asarray([key in wanted for key in row_keys], dtype=np.bool_)
        scopes = [index]
        for size in sizes:
            if size < index.size:
                scopes.append(_sub_scope(index, labels, size, rng, embedder.name))
        for chosen in scopes:
            found = signals(chosen, question.text, vector)
            chosen_labels = np.asarray(
                [dedup_key(record.content) in wanted for record in chosen.records]
            )
            features = relevance_features(
                found.cosine, found.keyword, found.usable, chosen.created_at
            )
            rows.append(
                QuestionRows(
                    conversation.index, chosen.size, features, chosen_labels, found.shared_terms
                )
            )
    return rows


def _sub_scope(
    index: ScopeIndex,
    labels: npt.NDArray[np.bool_],
    size: int,
    rng: np.random.Generator,
    embedder_name: str,
) -> ScopeIndex:
    """`size` consecutive turns (by time) holding at least one evidence turn: a user
    with a shorter history. Consecutive, not sampled, so that neighbours stay real."""
    order = np.argsort(index.created_at, kind="stable")
    evidence_positions = np.flatnonzero(labels[order])
    lowest = max(int(evidence_positions.min()) - size + 1, 0)
    highest = min(int(evidence_positions.max()), index.size - size)
    starts = [
        start
        for start in range(lowest, highest + 1)
        if np.any((evidence_positions >= start) & (evidence_positions < start + size))
    ]
    start = int(rng.choice(starts))
    rows = order[start : start + size]
    return ScopeIndex.build([index.records[row] for row in rows], embedder_name, _TERMS)


async def collect(
    conversations: Sequence[Conversation], embedder: Embedder, sizes: Sequence[int]
) -> list[QuestionRows]:
    rng = np.random.default_rng(SEED)
    rows: list[QuestionRows] = []
    with tempfile.TemporaryDirectory(prefix="gateway-relevance-fit-") as folder:
        store, sessions, database = await open_embedded_memory(Path(folder))
        try:
            for conversation in conversations:
                service = MemoryService(store, sessions, embedder)
                rows.extend(await conversation_rows(service, embedder, conversation, sizes, rng))
        finally:
            await database.close()
    return rows


def stacked(rows: Sequence[QuestionRows]) -> tuple[Floats, Floats]:
    features = np.concatenate([row.features for row in rows])
    labels = np.concatenate([row.labels for row in rows]).astype(np.float64)
    return features, labels


def row_weights(rows: Sequence[QuestionRows]) -> Floats:
    whole = {id(row) for row in _whole(rows)}
    return np.concatenate(
        [np.full(row.labels.size, 1.0 if id(row) in whole else SUB_SCOPE_WEIGHT) for row in rows]
    )


def fit_logistic(
    features: Floats, labels: Floats, weights: Floats, embedder: str
) -> RelevanceModel:
    """Newton's method on the weighted, L2-penalised log loss (bias not penalised)."""
    means = features.mean(axis=0)
    scales = features.std(axis=0)
    scales = np.where(scales > 1e-9, scales, 1.0)
    x = np.hstack([np.ones((features.shape[0], 1)), (features - means) / scales])
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], L2_PENALTY)
    penalty[0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -40, 40)))
        gradient = x.T @ (weights * (p - labels)) + penalty * w
        hessian = (x * (weights * p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return RelevanceModel(w[1:], means, scales, float(w[0]), embedder)


def calibration_report(model: RelevanceModel, rows: Sequence[QuestionRows]) -> dict[str, Any]:
    features, labels = stacked(rows)
    p = model.probability(features)
    evidence = labels > 0
    reliability = []
    for low, high in itertools.pairwise(RELIABILITY_EDGES):
        inside = (p >= low) & (p < high)
        if inside.any():
            reliability.append(
                {
                    "bin": f"{low:.2f}-{min(high, 1.0):.2f}",
                    "items": int(inside.sum()),
                    "mean_p": round(float(p[inside].mean()), 4),
                    "evidence_rate": round(float(labels[inside].mean()), 4),
                }
            )
    floors = {
        str(floor): {
            "evidence_pct": round(100 * float((p[evidence] >= floor).mean()), 2),
            "other_pct": round(100 * float((p[~evidence] >= floor).mean()), 3),
            "precision_pct": round(100 * float(labels[p >= floor].mean()), 1)
            if (p >= floor).any()
            else None,
        }
        for floor in FLOORS
    }
    return {
        "questions": len(rows),
        "items": int(labels.size),
        "evidence_items": int(evidence.sum()),
        "brier": round(float(np.mean((p - labels) ** 2)), 6),
        "brier_base_rate": round(float(np.mean((labels.mean() - labels) ** 2)), 6),
        "reliability": reliability,
        "floors": floors,
    }


def admission_report(
    model: RelevanceModel, rows: Sequence[QuestionRows], floor: float, top_k: int, terms: int
) -> dict[str, Any]:
    """What the session cache would admit from each question's ranking: items with
    p >= `floor`, or among the best `top_k` (by p) holding >= `terms` query terms."""
    counts = {"by_floor": [0, 0], "by_top_k": [0, 0], "either": [0, 0]}
    evidence_total = 0
    for row in rows:
        p = model.probability(row.features)
        position = np.empty(p.size, dtype=np.int64)
        position[np.argsort(-p, kind="stable")] = np.arange(p.size)
        by_floor = p >= floor
        by_top_k = (position < top_k) & (row.shared_terms >= terms)
        for name, admitted in (
            ("by_floor", by_floor),
            ("by_top_k", by_top_k),
            ("either", by_floor | by_top_k),
        ):
            counts[name][0] += int((admitted & row.labels).sum())
            counts[name][1] += int((admitted & ~row.labels).sum())
        evidence_total += int(row.labels.sum())
    return {
        name: {
            "evidence_pct": round(100 * hits / max(evidence_total, 1), 1),
            "precision_pct": round(100 * hits / max(hits + others, 1), 1),
            "others_per_question": round(others / max(len(rows), 1), 2),
        }
        for name, (hits, others) in counts.items()
    }


def format_report(name: str, report: dict[str, Any]) -> str:
    lines = [
        f"## {name}: {report['questions']} questions, {report['items']} items, "
        f"{report['evidence_items']} evidence; Brier {report['brier']} "
        f"(base rate {report['brier_base_rate']})",
        "| p bin | items | mean p | evidence rate |",
        "|---|---:|---:|---:|",
    ]
    for row in report["reliability"]:
        lines.append(
            f"| {row['bin']} | {row['items']} | {row['mean_p']:.3f} | {row['evidence_rate']:.3f} |"
        )
    lines += ["| floor | evidence >= floor | other >= floor | precision |", "|---:|---:|---:|---:|"]
    for floor, row in report["floors"].items():
        lines.append(
            f"| {floor} | {row['evidence_pct']}% | {row['other_pct']}% | {row['precision_pct']}% |"
        )
    return "\n".join(lines)


def _whole(rows: Sequence[QuestionRows], whole: bool = True) -> list[QuestionRows]:
    """The rows over whole conversations (or, with False, over the smaller scopes)."""
    largest: dict[int, int] = {}
    for row in rows:
        largest[row.conversation] = max(largest.get(row.conversation, 0), row.scope_size)
    return [row for row in rows if (row.scope_size == largest[row.conversation]) == whole]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the shared data folder")
    parser.add_argument("--out", type=Path, help="where to write the weights JSON")
    parser.add_argument("--train", default="0-2", help="conversations to fit on")
    parser.add_argument("--held-out", default="3-4", help="conversations to report on")
    args = parser.parse_args(argv)
    train, held_out = parse_selection(args.train), parse_selection(args.held_out)
    if set(train) & set(held_out):
        print("fit_memory_relevance: --train and --held-out overlap", file=sys.stderr)
        return 2
    from gateway.components import load_local_embedder

    async def load() -> tuple[str, list[QuestionRows]]:
        embedder = await load_local_embedder()
        conversations = load_conversations(args.data / LOCOMO_FILE, train + held_out)
        return embedder.name, await collect(conversations, embedder, SUB_SCOPE_SIZES)

    embedder_name, rows = asyncio.run(load())
    fitted = [row for row in rows if row.conversation in train]
    model = fit_logistic(*stacked(fitted), row_weights(fitted), embedder_name)
    held = [row for row in rows if row.conversation in held_out]
    reports = {
        "train_whole": calibration_report(model, _whole(fitted)),
        "held_out_whole": calibration_report(model, _whole(held)),
        "held_out_sub_scopes": calibration_report(model, _whole(held, False)),
    }
    print("weights:", dict(zip(FEATURE_NAMES, np.round(model.weights, 3), strict=True)))
    for name, report in reports.items():
        print(format_report(name, report))
    admission = {
        str(size): admission_report(
            model,
            [row for row in held if row.scope_size == size] if size else _whole(held),
            ADMIT_FLOOR,
            ADMIT_TOP_K,
            ADMIT_MIN_SHARED_TERMS,
        )
        for size in (0, *SUB_SCOPE_SIZES)
    }
    print(
        f"## held out: session admission (p >= {ADMIT_FLOOR}, or top {ADMIT_TOP_K} holding "
        f">= {ADMIT_MIN_SHARED_TERMS} query terms); scope 0 = whole conversations"
    )
    print("| scope | rule | evidence admitted | precision | others per question |")
    print("|---:|---|---:|---:|---:|")
    for size, rules in admission.items():
        for rule, row in rules.items():
            print(
                f"| {size} | {rule} | {row['evidence_pct']}% | {row['precision_pct']}% "
                f"| {row['others_per_question']} |"
            )
    reports["held_out_admission"] = admission
    if args.out:
        data = model.to_dict()
        data["fitted_on"] = {"data": "LoCoMo", "conversations": train}
        data["metrics"] = reports
        args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
