"""The in-memory half of the embedded vector index: one fingerprint's unit vectors as
a float32 matrix grown by doubling (and shrunk when mostly empty), with parallel entry
ids and expiry times, searched by one matrix-vector product. Touched only by the
index's database thread (see `vectors.py`)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from gateway.storage.protocols import Vector

# One row: most fingerprints (one per namespace, model, parameters...) hold few entries,
# and a partition sized for 16 cost 32 KiB each at 512 dimensions.
INITIAL_CAPACITY = 1


def unit_vector(vector: npt.ArrayLike, dimensions: int | None) -> Vector:
    """Validate and L2-normalise one vector, so stored dot products are cosines."""
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    if dimensions is not None and v.shape[0] != dimensions:
        raise ValueError(f"vector has {v.shape[0]} dimensions, the index holds {dimensions}")
    norm = float(np.linalg.norm(v))
    if not math.isfinite(norm) or norm == 0.0:
        raise ValueError("vector must be finite and non-zero")
    return v / np.float32(norm)


class Partition:
    """The vectors of one fingerprint: an append-friendly matrix plus parallel arrays."""

    __slots__ = ("expires", "ids", "size", "vectors")

    def __init__(self, dimensions: int, capacity: int = INITIAL_CAPACITY) -> None:
        self.vectors = np.empty((max(capacity, 1), dimensions), dtype=np.float32)
        self.expires = np.empty(max(capacity, 1), dtype=np.float64)
        self.ids: list[str] = []
        self.size = 0

    def append(self, entry_id: str, vector: Vector, expires_at: float) -> int:
        if self.size == len(self.expires):
            self._resize(2 * len(self.expires))
        row = self.size
        self.vectors[row] = vector
        self.expires[row] = expires_at
        self.ids.append(entry_id)
        self.size += 1
        return row

    def remove(self, row: int) -> str | None:
        """Drop one row by moving the last row into its place (order does not matter:
        search sorts by score); returns the id now at `row`, if one moved."""
        last = self.size - 1
        moved: str | None = None
        if row != last:
            self.vectors[row] = self.vectors[last]
            self.expires[row] = self.expires[last]
            moved = self.ids[row] = self.ids[last]
        self.ids.pop()
        self.size = last
        capacity = len(self.expires)
        if capacity > INITIAL_CAPACITY and capacity >= 4 * max(self.size, 1):
            self._resize(capacity // 2)
        return moved

    def _resize(self, capacity: int) -> None:
        vectors = np.empty((capacity, self.vectors.shape[1]), dtype=np.float32)
        vectors[: self.size] = self.vectors[: self.size]
        expires = np.empty(capacity, dtype=np.float64)
        expires[: self.size] = self.expires[: self.size]
        self.vectors, self.expires = vectors, expires

    def live(self, now: float) -> int:
        return int(np.count_nonzero(self.expires[: self.size] > now))

    def compact(self, now: float) -> list[tuple[str, int]]:
        """Drop expired (and replaced) rows, shrink when mostly empty; returns the
        (entry_id, old row) pairs dropped."""
        alive = self.expires[: self.size] > now
        keep = np.flatnonzero(alive)
        if len(keep) == self.size:
            return []
        dropped = [(self.ids[i], i) for i in np.flatnonzero(~alive).tolist()]
        capacity = len(self.expires)
        while capacity > INITIAL_CAPACITY and capacity >= 4 * max(len(keep), 1):
            capacity //= 2
        vectors = np.empty((capacity, self.vectors.shape[1]), dtype=np.float32)
        vectors[: len(keep)] = self.vectors[keep]
        expires = np.empty(capacity, dtype=np.float64)
        expires[: len(keep)] = self.expires[keep]
        self.vectors, self.expires = vectors, expires
        self.ids = [self.ids[i] for i in keep.tolist()]
        self.size = len(keep)
        return dropped

    def search(self, query: Vector, top_k: int, now: float) -> list[tuple[str, float]]:
        n = self.size
        if n == 0 or top_k <= 0:
            return []
        scores = self.vectors[:n] @ query
        expired = self.expires[:n] <= now
        if expired.any():
            scores[expired] = -np.inf
        k = min(top_k, n)
        best = np.argpartition(scores, n - k)[n - k :] if k < n else np.arange(n)
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(self.ids[i], float(scores[i])) for i in best.tolist() if scores[i] > -np.inf]
