"""Embedders served by any model the provider knows (OpenAI, Azure, Ollama, vLLM, ...).

The request goes through the gateway's own `EmbeddingProvider` (litellm router: retries,
fallbacks and error mapping included) with the OpenAI embeddings request and response
shapes.

Calibration: a hosted model's raw cosine lives on its own scale (some models put nearly
every pair above 0.9). Without a fitted calibration the raw cosine is used as-is
(`Calibration.identity()`), which makes policy thresholds mean something different for
this model. Operators should fit one on labelled pairs with
`gateway calibrate --data <labelled pairs> --config <gateway.yaml> --out <file>` and name
the file in the config's `semantic.calibration` (loaded by
`gateway.components.build_embedder`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gateway.embed.calibrated import CalibratedEmbedder
from gateway.embed.calibration import Calibration
from gateway.embed.protocol import Vectors
from gateway.embed.vectors import l2_normalise
from gateway.errors import GatewayInternalError
from gateway.providers.protocol import EmbeddingProvider


class EmbeddingResponseError(GatewayInternalError, RuntimeError):
    """The provider answered, but not with one usable vector per input text."""


class LiteLLMEmbedder(CalibratedEmbedder):
    """`Embedder` over `EmbeddingProvider.embed`.

    `dimensions` is 0 until the first response unless given; `warm_up()` makes one call so
    that it is known before the vector index (whose name carries it) is opened.
    """

    def __init__(
        self,
        provider: EmbeddingProvider,
        model: str,
        name: str | None = None,
        calibration: Calibration | None = None,
        dimensions: int | None = None,
    ) -> None:
        self.name = name or f"litellm:{model}"
        self.dimensions = dimensions or 0
        self._provider = provider
        self._model = model
        self._calibration = calibration or Calibration.identity(self.name)

    async def embed(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        response = await self._provider.embed({"model": self._model, "input": list(texts)})
        try:
            vectors = l2_normalise(self._vectors_from(response, len(texts)))
        except (TypeError, ValueError) as exc:
            raise EmbeddingResponseError(f"{self.name} returned non-numeric embeddings") from exc
        if not np.isfinite(vectors).all():
            raise EmbeddingResponseError(f"{self.name} returned non-finite embeddings")
        if self.dimensions == 0:
            self.dimensions = int(vectors.shape[1])
        elif vectors.shape[1] != self.dimensions:
            raise EmbeddingResponseError(
                f"{self.name} returned {vectors.shape[1]}-dimensional vectors, "
                f"expected {self.dimensions}"
            )
        return vectors

    def _vectors_from(self, response: dict[str, Any], expected: int) -> list[list[float]]:
        data = response.get("data")
        if not isinstance(data, list) or len(data) != expected:
            count = len(data) if isinstance(data, list) else "no"
            raise EmbeddingResponseError(
                f"{self.name} returned {count} embeddings for {expected} inputs"
            )
        # OpenAI's shape carries an index per item; order by it rather than trust the
        # list order, which some OpenAI-compatible servers do not keep.
        try:
            items = sorted(data, key=lambda item: int(item.get("index", 0)))
            vectors = [item["embedding"] for item in items]
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise EmbeddingResponseError(f"{self.name} returned malformed embeddings") from exc
        width = {len(v) if isinstance(v, list) else -1 for v in vectors}
        if len(width) != 1 or min(width) <= 0:
            raise EmbeddingResponseError(
                f"{self.name} returned embeddings that are not float lists of one length"
            )
        return vectors

    async def warm_up(self) -> None:
        await self.embed(["warm up"])
