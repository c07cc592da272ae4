"""Per-pair signals for the adaptive simulation: what the gateway knows about each pair
of a labelled set when the pair arrives as traffic (stored request = sentence 1, new
request = sentence 2).

For each pair: its calibrated similarity (the embedder's curve for the new request's
language, as the semantic stage reads it) and whether it passes every check the
pipeline runs before any threshold (the entity comparison, strict terms, the structure
guard; same material, an ask short enough). That is `judge_candidate` itself with the
thresholds at the bottom of the scale, so that only its checks can refuse; the guard
reads the similarity, not the threshold, so its verdict does not depend on where the
threshold is. Computing these is the slow part (embedding, entity analysis); they are
computed once per set and can be kept in a cache folder outside the repository.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import orjson

from gateway.embed.protocol import Embedder
from gateway.entities.entities import EntityComparator
from gateway.pipeline.judge import StructureGuard, judge_candidate
from gateway.policy.models import SemanticCachePolicy
from gateway_tools.evaluation.adaptive_sim import StreamPair
from gateway_tools.evaluation.pairs import HALVES, LabeledPair, embed_pair_set, in_half, scaled
from gateway_tools.evaluation.probes import DEFAULT_PROBE_DIR, load_probes

# The lowest level a policy accepts (thresholds are > 0): every candidate reaches the
# checks, none is refused for its similarity.
_CHECKS_ONLY_LEVEL = 1e-6
SIGNALS_FORMAT = 2


def probe_pairs(directory: Path = DEFAULT_PROBE_DIR) -> list[LabeledPair]:
    """The probe suite's paraphrases and near misses; the candidate plays the stored
    request, the query the new one."""
    return [
        LabeledPair(first=p.candidate, second=p.query, duplicate=p.same_meaning)
        for p in load_probes(directory)
    ]


def checks_only(policy: SemanticCachePolicy) -> SemanticCachePolicy:
    """The policy with its thresholds at the bottom: `judge_candidate` accepts exactly
    the candidates that pass its checks."""
    return policy.model_copy(
        update={"accept_threshold": _CHECKS_ONLY_LEVEL, "review_min_similarity": _CHECKS_ONLY_LEVEL}
    )


async def stream_signals(
    pairs: Sequence[LabeledPair],
    embedder: Embedder,
    comparator: EntityComparator,
    guard: StructureGuard | None,
    policy: SemanticCachePolicy,
) -> list[StreamPair]:
    if not pairs:
        return []
    embedded = await embed_pair_set(pairs, embedder, policy.max_query_chars)
    rule = checks_only(policy)
    signals = []
    for original, pair, candidate, cosine, language in zip(
        pairs,
        embedded.pairs,
        embedded.candidates,
        embedded.cosines,
        embedded.languages,
        strict=True,
    ):
        similarity = scaled(embedder, float(cosine), language)
        passes = False
        if candidate:
            decision = await judge_candidate(
                pair.second, pair.first, similarity, rule, comparator, None, guard
            )
            passes = decision.accepted
        half = next(h for h in HALVES if in_half(original.first, h))
        signals.append(StreamPair(round(similarity, 6), passes, pair.duplicate, language, half))
    return signals


def signals_cache_key(name: str, source: Path | None, *parts: object) -> str:
    """A cache file name that changes when the data file, the embedder or the policy
    does (`parts`)."""
    digest = hashlib.sha256(repr((SIGNALS_FORMAT, *parts)).encode())
    if source is not None and source.is_file():
        stat = source.stat()
        digest.update(f"{source.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return f"{name}-{digest.hexdigest()[:16]}.json"


def read_cached_signals(path: Path) -> list[StreamPair] | None:
    try:
        rows = orjson.loads(path.read_bytes())
        return [StreamPair(**row) for row in rows]
    except (OSError, orjson.JSONDecodeError, TypeError):
        return None


def write_cached_signals(path: Path, signals: Sequence[StreamPair]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_bytes(orjson.dumps([asdict(s) for s in signals]))
    temporary.replace(path)
