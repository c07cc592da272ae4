"""Small vector helpers shared by the embedders."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gateway.embed.protocol import Vectors


def l2_normalise(matrix: npt.ArrayLike) -> Vectors:
    """Rows scaled to unit length, as a C-contiguous float32 (N, D) array.

    A zero row stays zero (its cosine with anything is then 0) instead of becoming NaN.
    """
    vectors = np.array(matrix, dtype=np.float32, copy=True, ndmin=2)
    if vectors.ndim != 2:
        raise ValueError(f"expected a 2-D matrix of vectors, got shape {vectors.shape}")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    np.divide(vectors, norms, out=vectors, where=norms > 0)
    return np.ascontiguousarray(vectors)
