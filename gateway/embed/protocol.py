"""What the semantic cache needs from an embedder."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, shape (len(texts), dimensions).

    `name` identifies the model (it becomes part of the vector index name, so vectors of
    two models are never compared). `calibrate` maps this model's raw cosine onto the
    gateway's shared similarity scale, so that policy thresholds mean the same thing
    whatever embedder is configured; `language` is the language of the ask (`en`, `zh`,
    see `gateway.nlp.detect_language`), whose cosines a calibration may read on a curve
    of their own. None: the curve fitted on all languages together.
    """

    name: str
    dimensions: int

    async def embed(self, texts: list[str]) -> Vectors: ...

    def calibrate(self, cosine: float, language: str | None = None) -> float: ...

    async def warm_up(self) -> None: ...
