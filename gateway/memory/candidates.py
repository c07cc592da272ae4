"""Which memories of a scope the relevance model scores for one query.

The calibrated relevance (`gateway.memory.relevance`) rises with a memory's cosine and
keyword score and with its ranks by each; a memory far down both rankings scores
under every result a query keeps. So only a candidate set is scored: the best
`RELEVANCE_CANDIDATES_PER_SIGNAL` by cosine, the best as many by keyword (only
memories holding a query term), and the memories stored just before and just after
each of them (the model lifts a memory whose neighbour matches: the reply to the turn
that names the subject). The features of a candidate are the same numbers as when
every memory is scored (ranks and best scores come from the whole scope); a scope no
larger than the pool is scored whole. Measured on 10,000 knowledge items
(benchmarks/memory_load.py): the relevance features were most of ranking them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Indices = npt.NDArray[np.int64]

# Per signal. Retrieval keeps at most a few dozen memories per query (twice the
# policy's top_k); the LoCoMo evaluation gives the same results with this pool as
# with every memory scored (README, "Memory recall (LoCoMo)").
RELEVANCE_CANDIDATES_PER_SIGNAL = 256


def candidate_rows(
    cosine: Floats,
    usable: npt.NDArray[np.bool_],
    keyword: Floats,
    adjacent: tuple[Indices, Indices],
    per_signal: int = RELEVANCE_CANDIDATES_PER_SIGNAL,
) -> Indices:
    """The rows to score, ascending (so that equal scores keep the rows' order);
    `per_signal` 0: every row."""
    count = cosine.shape[0]
    # Each signal's best plus both neighbours of each: at most 6 x per_signal rows.
    if per_signal <= 0 or count <= 2 * per_signal:
        return np.arange(count, dtype=np.int64)
    # Every row comparable (the usual case): the mask would keep every value.
    by_meaning = _best(cosine if usable.all() else np.where(usable, cosine, -np.inf), per_signal)
    matched = np.flatnonzero(keyword > 0)
    by_keyword = (
        matched if matched.size <= per_signal else matched[_best(keyword[matched], per_signal)]
    )
    chosen = np.concatenate((by_meaning, by_keyword))
    before, after = adjacent[0][chosen], adjacent[1][chosen]
    # A mask, not np.unique: marking 10,000 flags is cheaper than sorting the rows.
    picked = np.zeros(count, dtype=np.bool_)
    picked[chosen] = True
    picked[before[before >= 0]] = True
    picked[after[after >= 0]] = True
    rows: Indices = np.flatnonzero(picked).astype(np.int64)
    return rows


def _best(values: Floats, count: int) -> Indices:
    """The positions of the `count` largest values (any order; ties at the cut: any)."""
    if values.shape[0] <= count:
        return np.arange(values.shape[0], dtype=np.int64)
    best: Indices = np.argpartition(-values, count - 1)[:count].astype(np.int64)
    return best
