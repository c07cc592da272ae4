"""Vectors for the semantic-index benchmark, and the exact answers to grade it by.

`clustered` (the default) imitates what a cache sees from a sentence embedder: prompts
come in topics (clusters of paraphrases and near-paraphrases) and every embedding shares
a common direction (embedders are anisotropic: two unrelated sentences still score
~0.2). Each vector is `normalise(a * common + b * centroid + c * noise)` with unit
random `common`, `centroid` (one of `rows // CLUSTER_SIZE` topics) and `noise`, so two
vectors of one topic score ~0.75 and two of different topics ~0.2 (the ranges seen
with the shipped 512-d embedder on paraphrase and unrelated pairs). `random` (uniform
on the sphere: nothing is near anything) is the worst case for a graph index and what
the benchmark used before; it is kept for comparison.

Embedding a million real prompts is too slow on a small machine (~2-3 ms each), which
is why the data is synthetic; the structure, not the texts, is what an index sees.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
CLUSTERED, RANDOM_SPHERE = "clustered", "random"
KINDS = (CLUSTERED, RANDOM_SPHERE)
CLUSTER_SIZE = 100
_COMMON, _CENTROID, _NOISE = 0.45, 0.75, 0.5
_CHUNK_ROWS = 50_000


def _unit(matrix: Matrix) -> Matrix:
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def unit_rows(rng: np.random.Generator, rows: int, dimensions: int) -> Matrix:
    return _unit(rng.standard_normal((rows, dimensions), dtype=np.float32))


class VectorSource:
    """Draws vectors of one kind; the same seed gives the same vectors."""

    def __init__(self, kind: str, rows: int, dimensions: int, seed: int) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown vector kind {kind!r}")
        self.kind = kind
        self.dimensions = dimensions
        rng = np.random.default_rng([seed, 7])
        self._common = unit_rows(rng, 1, dimensions)[0]
        self._centroids = unit_rows(rng, max(1, rows // CLUSTER_SIZE), dimensions)

    def draw(self, rng: np.random.Generator, rows: int) -> Matrix:
        """`rows` fresh vectors (for clustered data: each of a random topic)."""
        out = np.empty((rows, self.dimensions), dtype=np.float32)
        for start in range(0, rows, _CHUNK_ROWS):
            stop = min(rows, start + _CHUNK_ROWS)
            noise = unit_rows(rng, stop - start, self.dimensions)
            if self.kind == RANDOM_SPHERE:
                out[start:stop] = noise
                continue
            topics = self._centroids[rng.integers(0, len(self._centroids), stop - start)]
            mixed = _COMMON * self._common + _CENTROID * topics + _NOISE * noise
            out[start:stop] = _unit(mixed.astype(np.float32))
        return out


def exact_top_k(
    vectors: Matrix, rows: npt.NDArray[np.int64] | None, queries: Matrix, k: int
) -> list[list[int]]:
    """The true k nearest rows (by cosine; the vectors are unit) of each query, among
    `rows` of `vectors` (all of them when None): numpy brute force, in chunks so that a
    million rows never need a (queries x rows) score matrix at once."""
    total = len(vectors) if rows is None else len(rows)
    best_scores = np.full((len(queries), 0), -np.inf, dtype=np.float32)
    best_rows = np.empty((len(queries), 0), dtype=np.int64)
    for start in range(0, total, _CHUNK_ROWS):
        stop = min(total, start + _CHUNK_ROWS)
        chunk_rows = np.arange(start, stop) if rows is None else rows[start:stop]
        scores = queries @ vectors[chunk_rows].T
        merged_scores = np.concatenate([best_scores, scores], axis=1)
        merged_rows = np.concatenate([best_rows, np.broadcast_to(chunk_rows, scores.shape)], axis=1)
        keep = np.argsort(-merged_scores, axis=1, kind="stable")[:, :k]
        best_scores = np.take_along_axis(merged_scores, keep, axis=1)
        best_rows = np.take_along_axis(merged_rows, keep, axis=1)
    return [[int(row) for row in found] for found in best_rows]


def recall(found: list[list[int]], truth: list[list[int]]) -> float | None:
    """Mean recall@k: the share of each query's true k nearest that the index returned."""
    scored = [
        len(set(got) & set(want)) / len(want)
        for got, want in zip(found, truth, strict=True)
        if want
    ]
    return round(sum(scored) / len(scored), 4) if scored else None
