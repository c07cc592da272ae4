"""Measure semantic-cache decisions on labeled pair sets, next to a plain cosine baseline.

Two protocols (see shared/data/README.md):

- pair: store sentence 1, query sentence 2; a hit on a duplicate pair is correct, a hit
  on a non-duplicate is a false hit.
- pool: store ALL first sentences in one index, query every second sentence against the
  whole pool; a hit is correct only if it returns its own partner AND the pair is a
  duplicate; every other hit is a false hit.

The pipeline side runs the gateway's own decision code (`judge_candidate`: calibrated
similarity for the ask's language, entity comparison, structure guard, review band) with
the real embedder and the real embedded vector index. The baseline is a plain raw-cosine
threshold on the same vectors. `ablation_variants` lists the rules of an ablation (each
check switched off in turn), judged on the same vectors.

With `reviewer_errors` (`gateway eval pairs --reviewer-errors 0.90,0.05`) each protocol
is judged a second time with a simulated chat-model reviewer
(`gateway_tools.evaluation.simulated_reviewer`) in place of the offline one, under the
same policy with its review band on: the result's `model_reviewer` sits next to the
`pipeline` (offline default) row.
"""

from __future__ import annotations

import csv
import functools
import math
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.nlp import detect_language
from gateway.pipeline.judge import StructureGuard, judge_candidate
from gateway.policy.models import SemanticCachePolicy
from gateway.review.protocol import Reviewer
from gateway.storage.embedded.vectors import EmbeddedVectorIndex
from gateway.storage.protocols import SemanticEntry
from gateway.turn import ask_length, split_turn
from gateway_tools.evaluation.simulated_reviewer import SimulatedReviewer, pair_labels


@dataclass(frozen=True, slots=True)
class LabeledPair:
    first: str
    second: str
    duplicate: bool


def _read_rows(path: Path, delimiter: str, header: bool) -> list[list[str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        if delimiter == "\t":  # tab files carry bare quotes inside the text
            rows = list(csv.reader(handle, delimiter=delimiter, quoting=csv.QUOTE_NONE))
        else:
            rows = list(csv.reader(handle, delimiter=delimiter))
    return rows[1:] if header else rows


# set name -> (relative path, delimiter, has header, column of s1, s2, label)
PAIR_SETS: dict[str, tuple[str, str, bool, int, int, int]] = {
    "qqp": ("pairs_en/qqp_val.csv", ",", True, 0, 1, 2),
    "paws_en": ("pairs_en/paws_wiki_dev.tsv", "\t", True, 1, 2, 3),
    "mrpc": ("pairs_en/mrpc_train.txt", "\t", True, 3, 4, 0),
    "lcqmc": ("pairs_zh/lcqmc_dev.txt", "\t", False, 0, 1, 2),
    "pawsx_zh": ("pairs_zh/pawsx_zh_dev.tsv", "\t", True, 1, 2, 3),
    "bq": ("pairs_zh/bq_dev.csv", ",", True, 0, 1, 2),
    "afqmc": ("pairs_zh/afqmc_train.txt", "\t", False, 0, 1, 2),
}


HALVES = ("a", "b")


def in_half(first_sentence: str, half: str) -> bool:
    """A fixed split of a pair set into halves "a" and "b" by the first sentence, so
    that pairs sharing a first sentence (PAWS builds clusters of them) stay together:
    a model trained on one half
    (`python -m gateway_tools.training.train_reviewer --half a`) is measured on
    the other (`gateway eval pairs --half b --reviewer-weights ...`)."""
    return zlib.crc32(first_sentence.encode("utf-8")) % 2 == HALVES.index(half)


def load_pairs(
    data_dir: Path, name: str, limit: int | None = None, half: str | None = None
) -> list[LabeledPair]:
    relative, delimiter, header, a, b, label = PAIR_SETS[name]
    pairs = []
    for row in _read_rows(data_dir / relative, delimiter, header):
        if len(row) <= max(a, b, label) or row[label].strip() not in ("0", "1"):
            continue
        if not row[a].strip() or not row[b].strip():
            continue
        if half is not None and not in_half(row[a].strip(), half):
            continue
        pairs.append(LabeledPair(row[a].strip(), row[b].strip(), row[label].strip() == "1"))
    if limit is not None and len(pairs) > limit:
        # Deterministic subsample spread over the whole file.
        step = len(pairs) / limit
        pairs = [pairs[int(i * step)] for i in range(limit)]
    return pairs


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 0.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Tally:
    """Counts for one decision rule on one set."""

    pairs: int = 0
    positives: int = 0
    negatives: int = 0
    hits: int = 0
    correct_hits: int = 0
    # Pool protocol: hits on another stored entry whose text is the query's own (after
    # case, space and punctuation). The protocol counts them false; the answer is right.
    same_text_hits: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    per_negative: bool = True

    @property
    def false_hits(self) -> int:
        return self.hits - self.correct_hits

    def summary(self) -> dict[str, object]:
        precision = self.correct_hits / self.hits if self.hits else 1.0
        # In the pool protocol a duplicate pair can be a false hit too (wrong partner),
        # so the rate is per query there; per negative pair in the pair protocol.
        denominator = self.negatives if self.per_negative else self.pairs
        false_rate = self.false_hits / denominator if denominator else 0.0
        return {
            "pairs": self.pairs,
            "hits": self.hits,
            "hit_rate": round(self.hits / self.pairs, 4) if self.pairs else 0.0,
            "precision": round(precision, 4),
            "recall": round(self.correct_hits / self.positives, 4) if self.positives else 0.0,
            "false_hits": self.false_hits,
            "false_hit_rate": round(false_rate, 4),
            "false_hit_rate_per": "negative pair" if self.per_negative else "query",
            "false_hit_rate_ci95": [
                round(x, 4) for x in wilson_interval(self.false_hits, denominator)
            ],
            "false_share_of_hits_ci95": [
                round(x, 4) for x in wilson_interval(self.false_hits, self.hits)
            ],
            "rejected_by": dict(self.rejections),
            "same_text_hits": self.same_text_hits,
            "precision_same_text_correct": round(
                (self.correct_hits + self.same_text_hits) / self.hits if self.hits else 1.0, 4
            ),
        }


def same_text(left: str, right: str) -> bool:
    """Equal once case, spaces and punctuation are ignored."""
    return _letters(left) == _letters(right)


def _letters(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


BASELINE_THRESHOLDS = (0.80, 0.85, 0.90)


async def _embed_all(
    embedder: Embedder, texts: Sequence[str], batch: int = 64
) -> npt.NDArray[np.float32]:
    chunks = [await embedder.embed(list(texts[i : i + batch])) for i in range(0, len(texts), batch)]
    return np.vstack(chunks).astype(np.float32)


def best_baseline_recall_at(
    cosines: npt.NDArray[np.float32], labels: npt.NDArray[np.bool_], min_precision: float
) -> tuple[float, float | None]:
    """The highest recall any plain cosine threshold reaches with precision >= target,
    and that threshold (the curve the pipeline must beat)."""
    order = np.argsort(-cosines)
    sorted_labels = labels[order]
    true_positives = np.cumsum(sorted_labels)
    served = np.arange(1, len(order) + 1)
    precision = true_positives / served
    positives = max(int(labels.sum()), 1)
    best_recall: float = 0.0
    best_threshold: float | None = None
    for i in np.nonzero(precision >= min_precision)[0]:
        recall = float(true_positives[i]) / positives
        if recall > best_recall:
            best_recall, best_threshold = recall, float(cosines[order[i]])
    return best_recall, best_threshold


Scale = Literal["language", "pooled", "raw"]


@dataclass(frozen=True, slots=True)
class Variant:
    """One rule of an ablation: a policy and the similarity scale it reads.

    `language`: the embedder's calibration for the ask's language (the gateway's own);
    `pooled`: its curve fitted on all languages together; `raw`: raw cosine read as if it
    were calibrated (no calibration at all)."""

    label: str
    policy: SemanticCachePolicy
    scale: Scale = "language"
    reviewer: Reviewer | None = None  # in place of the evaluation's reviewer


# The ablation's review band starts here (calibrated), below the default accept level.
ABLATION_BAND_FLOOR = 0.90


def ablation_variants(policy: SemanticCachePolicy) -> list[Variant]:
    """The full rule, then each check switched off in turn. The default policy has no
    review band (switching review off is the full rule), so the last row adds one,
    [0.90, accept), to show what the reviewer would add."""
    band = min(ABLATION_BAND_FLOOR, policy.accept_threshold)

    def changed(**update: Any) -> SemanticCachePolicy:
        return policy.model_copy(update=update)

    return [
        Variant("full rule", policy),
        Variant("- difference analysis", changed(difference_check=False)),
        Variant(
            "- soft classes (hard bearing only)",
            changed(near_identical_tokens=0, short_ask_tokens=0),
        ),
        Variant("- rewordings from the floor", changed(preserving_floor=policy.accept_threshold)),
        Variant("- entity comparison", changed(entity_check=False)),
        Variant("- structure guard", changed(structure_guard=False)),
        Variant("- strict terms", changed(strict_band_terms=False)),
        Variant("- calibration by language (one curve)", policy, "pooled"),
        Variant("- calibration (raw cosine)", policy, "raw"),
        Variant(f"+ review band [{band:.2f}, accept)", changed(review_min_similarity=band)),
    ]


# (accept rate on duplicate pairs, on the others) of a simulated chat-model reviewer.
ReviewerErrors = tuple[float, float]


def with_review_band(policy: SemanticCachePolicy) -> SemanticCachePolicy:
    """`policy` with its review on: a chat-model reviewer is sent
    [review.band_floor, threshold)."""
    return policy.model_copy(update={"review": policy.review.model_copy(update={"enabled": True})})


def simulated_reviewer(pairs: Sequence[LabeledPair], errors: ReviewerErrors) -> SimulatedReviewer:
    """A simulated chat-model reviewer that knows these pairs' labels."""
    return SimulatedReviewer(pair_labels(pairs), *errors)


def _model_reviewer_result(
    simulated: SimulatedReviewer, policy: SemanticCachePolicy, summary: dict[str, Any]
) -> dict[str, Any]:
    accept = policy.accept_threshold
    return {
        **summary,
        "reviewer": simulated.summary(),
        "review_band": [policy.review.band_floor, accept],
        "band_active": policy.review.enabled and policy.review.band_floor < accept,
    }


def scaled(embedder: Embedder, cosine: float, language: str, scale: Scale = "language") -> float:
    """The similarity `judge_candidate` is given for this raw cosine."""
    if scale == "raw":
        return max(0.0, float(cosine))
    return embedder.calibrate(float(cosine), language if scale == "language" else None)


@dataclass(frozen=True, slots=True)
class SplitText:
    """A pair set's text as the semantic stage sees it (`gateway/turn/`): the ask, what
    must match exactly (the material), and whether it is compared by meaning at all."""

    ask: str
    material: tuple[str, ...]
    comparable: bool


def split_for_cache(text: str, max_query_chars: int) -> SplitText:
    split = split_turn(text, max_query_chars)
    return SplitText(
        split.ask, split.material, bool(split.ask) and ask_length(split.ask) <= max_query_chars
    )


@dataclass(frozen=True, slots=True)
class EmbeddedPairs:
    """A pair set as the semantic stage sees it, embedded once: `pairs` hold the asks,
    `candidates` whether a pair is compared by meaning at all (same material, asks short
    enough), `cosines` the raw cosine of the asks, `languages` the new request's (its
    ask's language picks the calibration curve)."""

    pairs: list[LabeledPair]
    candidates: list[bool]
    cosines: npt.NDArray[np.float32]
    labels: npt.NDArray[np.bool_]
    languages: list[str]


async def embed_pair_set(
    pairs: Sequence[LabeledPair], embedder: Embedder, max_query_chars: int
) -> EmbeddedPairs:
    """Split each text as the gateway splits a turn and embed the asks."""
    split_first = [split_for_cache(p.first, max_query_chars) for p in pairs]
    split_second = [split_for_cache(p.second, max_query_chars) for p in pairs]
    candidates = [
        a.comparable and b.comparable and a.material == b.material
        for a, b in zip(split_first, split_second, strict=True)
    ]
    asks = [
        LabeledPair(a.ask or p.first, b.ask or p.second, p.duplicate)
        for p, a, b in zip(pairs, split_first, split_second, strict=True)
    ]
    firsts = await _embed_all(embedder, [p.first for p in asks])
    seconds = await _embed_all(embedder, [p.second for p in asks])
    return EmbeddedPairs(
        pairs=asks,
        candidates=candidates,
        cosines=np.einsum("ij,ij->i", firsts, seconds),
        labels=np.array([p.duplicate for p in asks], dtype=bool),
        languages=[detect_language(p.second) for p in asks],
    )


async def evaluate_pair_protocol(
    pairs: Sequence[LabeledPair],
    embedder: Embedder,
    comparator: EntityComparator,
    reviewer: Reviewer | None,
    policy: SemanticCachePolicy,
    guard: StructureGuard | None = None,
    variants: Sequence[Variant] | None = None,
    reviewer_errors: ReviewerErrors | None = None,
) -> dict[str, object]:
    """Pair protocol for the policy (and, with `variants`, for each of them too: an
    ablation on the same vectors; with `reviewer_errors`, with a simulated chat-model
    reviewer too). Each text is split as the gateway splits a turn: the asks are
    embedded and judged, and a pair whose material differs (or whose ask is too long) is
    never a candidate."""
    embedded = await embed_pair_set(pairs, embedder, policy.max_query_chars)
    pairs, candidates, cosines = embedded.pairs, embedded.candidates, embedded.cosines
    labels, languages = embedded.labels, embedded.languages
    judge = functools.partial(
        _judge_pairs, pairs, candidates, cosines, languages, embedder, comparator, reviewer, guard
    )
    started = time.perf_counter()
    pipeline = await judge(Variant("", policy))
    judged_ms = (time.perf_counter() - started) * 1000 / max(len(pairs), 1)
    baselines = {t: Tally() for t in BASELINE_THRESHOLDS}
    for pair, cosine in zip(pairs, cosines, strict=True):
        for threshold, tally in baselines.items():
            _count_pair(tally, pair, cosine >= threshold)
    summary = pipeline.summary()
    result: dict[str, object] = {
        "protocol": "pair",
        "pipeline": summary,
        "baseline_cosine": {f"{t:.2f}": b.summary() for t, b in baselines.items()},
        "best_baseline_at_pipeline_precision": _best_baseline(cosines, labels, summary),
        "auc": round(_auc(cosines, labels), 4),
        "judge_ms_per_pair": round(judged_ms, 3),
    }
    if reviewer_errors is not None:
        simulated = simulated_reviewer(pairs, reviewer_errors)
        modelled = (await judge(Variant("model reviewer", policy, reviewer=simulated))).summary()
        modelled["best_baseline"] = _best_baseline(cosines, labels, modelled)
        result["model_reviewer"] = _model_reviewer_result(simulated, policy, modelled)
    if variants:
        rows = []
        for variant in variants:
            tally = await judge(variant)
            row = tally.summary()
            rows.append(
                {
                    "rule": variant.label,
                    **row,
                    "best_baseline": _best_baseline(cosines, labels, row),
                }
            )
        result["ablation"] = rows
    return result


async def _judge_pairs(
    pairs: Sequence[LabeledPair],
    candidates: Sequence[bool],
    cosines: npt.NDArray[np.float32],
    languages: Sequence[str],
    embedder: Embedder,
    comparator: EntityComparator,
    reviewer: Reviewer | None,
    guard: StructureGuard | None,
    variant: Variant,
) -> Tally:
    tally = Tally()
    for pair, candidate, cosine, language in zip(
        pairs, candidates, cosines, languages, strict=True
    ):
        if not candidate:  # other material, or an ask too long to compare by meaning
            _count_pair(tally, pair, False)
            tally.rejections["no_candidate"] += 1
            continue
        decision = await judge_candidate(
            pair.second,
            pair.first,
            scaled(embedder, float(cosine), language, variant.scale),
            variant.policy,
            comparator,
            variant.reviewer if variant.reviewer is not None else reviewer,
            guard,
        )
        _count_pair(tally, pair, decision.accepted)
        if not decision.accepted and decision.reason is not None:
            tally.rejections[decision.reason.value] += 1
    return tally


def _count_pair(tally: Tally, pair: LabeledPair, served: bool) -> None:
    tally.pairs += 1
    tally.positives += pair.duplicate
    tally.negatives += not pair.duplicate
    if served:
        tally.hits += 1
        tally.correct_hits += pair.duplicate


def _best_baseline(
    cosines: npt.NDArray[np.float32], labels: npt.NDArray[np.bool_], summary: dict[str, Any]
) -> dict[str, float | None]:
    """The best plain cosine threshold at the rule's own precision (the curve to beat)."""
    target = float(summary["precision"])
    best_recall, best_threshold = best_baseline_recall_at(cosines, labels, target)
    return {
        "precision_target": target,
        "recall": round(best_recall, 4),
        "raw_cosine_threshold": None if best_threshold is None else round(best_threshold, 4),
    }


async def evaluate_pool_protocol(
    pairs: Sequence[LabeledPair],
    embedder: Embedder,
    comparator: EntityComparator,
    reviewer: Reviewer | None,
    policy: SemanticCachePolicy,
    guard: StructureGuard | None = None,
    reviewer_errors: ReviewerErrors | None = None,
) -> dict[str, object]:
    firsts = sorted({p.first for p in pairs})
    first_ids = {text: index for index, text in enumerate(firsts)}
    split_firsts = [split_for_cache(text, policy.max_query_chars) for text in firsts]
    split_seconds = [split_for_cache(p.second, policy.max_query_chars) for p in pairs]
    first_vectors = await _embed_all(
        embedder, [s.ask or t for s, t in zip(split_firsts, firsts, strict=True)]
    )
    second_vectors = await _embed_all(
        embedder, [s.ask or p.second for s, p in zip(split_seconds, pairs, strict=True)]
    )
    # The pool is judged on the asks: the simulated reviewer knows the pairs by those.
    asks = [
        LabeledPair(split_firsts[first_ids[pair.first]].ask, split.ask, pair.duplicate)
        for pair, split in zip(pairs, split_seconds, strict=True)
    ]
    simulated = simulated_reviewer(asks, reviewer_errors) if reviewer_errors else None
    pipeline = Tally(per_negative=False)
    modelled = Tally(per_negative=False)
    baselines = {t: Tally(per_negative=False) for t in BASELINE_THRESHOLDS}
    with tempfile.TemporaryDirectory() as workdir:
        index = await EmbeddedVectorIndex.open(Path(workdir), "evaluation")
        now = time.time()
        for text, split, vector in zip(firsts, split_firsts, first_vectors, strict=True):
            if not split.comparable:
                continue  # the gateway would not store it in the semantic index
            entry = SemanticEntry(
                entry_id=str(first_ids[text]),
                tenant="eval",
                model="eval",
                fingerprint=_pool_fingerprint(split),
                query_text=split.ask,
                completion={},
                created_at=now,
                expires_at=now + 86400,
            )
            await index.add(entry, vector)
        for pair, split, vector in zip(pairs, split_seconds, second_vectors, strict=True):
            for tally in (pipeline, modelled, *baselines.values()):
                tally.pairs += 1
                tally.positives += pair.duplicate
                tally.negatives += not pair.duplicate
            candidates = (
                await index.search(_pool_fingerprint(split), vector, policy.top_k)
                if split.comparable
                else []
            )
            language = detect_language(pair.second)
            partner = str(first_ids[pair.first])
            judged = [(pipeline, reviewer)] + ([(modelled, simulated)] if simulated else [])
            for tally, judge in judged:
                served, top_reason = await _first_served(
                    split.ask, candidates, language, embedder, policy, comparator, judge, guard
                )
                if served is not None:
                    _count_pool_hit(tally, served, partner, pair)
                else:
                    tally.rejections[top_reason] += 1
            if candidates:
                top, top_cosine = candidates[0]
                for threshold, tally in baselines.items():
                    if top_cosine >= threshold:
                        _count_pool_hit(tally, top, partner, pair)
        await index.close()
    result: dict[str, object] = {
        "protocol": "pool",
        "pool_size": len(firsts),
        "pipeline": pipeline.summary(),
        "baseline_cosine": {f"{t:.2f}": b.summary() for t, b in baselines.items()},
    }
    if simulated is not None:
        result["model_reviewer"] = _model_reviewer_result(simulated, policy, modelled.summary())
    return result


async def _first_served(
    ask: str,
    candidates: Sequence[tuple[SemanticEntry, float]],
    language: str,
    embedder: Embedder,
    policy: SemanticCachePolicy,
    comparator: EntityComparator,
    reviewer: Reviewer | None,
    guard: StructureGuard | None,
) -> tuple[SemanticEntry | None, str]:
    """The candidate served (best first), or None and why the best one was not."""
    top_reason = "no_candidate"
    for rank, (entry, cosine) in enumerate(candidates):
        decision = await judge_candidate(
            ask,
            entry.query_text,
            embedder.calibrate(cosine, language),
            policy,
            comparator,
            reviewer,
            guard,
        )
        if decision.accepted:
            return entry, top_reason
        reason = decision.reason.value if decision.reason else "rejected"
        if rank == 0:
            top_reason = reason
        if reason == "below_threshold":
            break
    return None, top_reason


def _pool_fingerprint(split: SplitText) -> str:
    return "pool:" + "\x00".join(split.material)


def _count_pool_hit(tally: Tally, served: SemanticEntry, partner: str, pair: LabeledPair) -> None:
    tally.hits += 1
    if served.entry_id == partner:
        tally.correct_hits += pair.duplicate
    else:
        tally.same_text_hits += same_text(served.query_text, pair.second)


def _auc(scores: npt.NDArray[np.float32], labels: npt.NDArray[np.bool_]) -> float:
    positives, negatives = int(labels.sum()), int((~labels).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    ranks = np.empty(len(scores))
    ranks[np.argsort(scores)] = np.arange(1, len(scores) + 1)
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))
