"""In-process fakes behind the memory protocols, for unit tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from gateway.embed.protocol import Vectors
from gateway.memory.relevance import FEATURE_NAMES
from gateway.providers.protocol import UpstreamReport
from tests.unit.test_pipeline import ScriptedProvider


class TableEmbedder:
    """Maps known texts to given vectors; anything else to `default`."""

    name = "table-embedder"

    def __init__(self, table: dict[str, list[float]], default: list[float]) -> None:
        self.dimensions = len(default)
        self._table = {text: self._unit(vector) for text, vector in table.items()}
        self._default = self._unit(default)
        self.calls = 0

    @staticmethod
    def _unit(vector: list[float]) -> np.ndarray:
        array = np.asarray(vector, dtype=np.float32)
        return array / np.linalg.norm(array)

    async def embed(self, texts: list[str]) -> Vectors:
        self.calls += 1
        return np.stack([self._table.get(text, self._default) for text in texts]).astype(np.float32)

    def calibrate(self, cosine: float) -> float:
        return cosine

    async def warm_up(self) -> None:
        return None


class CosineRelevance:
    """A `RelevanceScorer` whose relevance is the raw cosine: with a table embedder every
    score, and so every floor's effect, is known exactly."""

    def probability(self, features: np.ndarray) -> np.ndarray:
        result: np.ndarray = np.clip(features[:, FEATURE_NAMES.index("cosine")], 0.0, 1.0)
        return result


class WeightedRelevance:
    """A `RelevanceScorer` that fuses raw cosine and keyword score linearly: known by
    construction for embedders the shipped model was not fitted on."""

    def __init__(self, dense_weight: float, keyword_weight: float) -> None:
        self._dense_weight = dense_weight
        self._keyword_weight = keyword_weight

    def probability(self, features: np.ndarray) -> np.ndarray:
        cosine = np.clip(features[:, FEATURE_NAMES.index("cosine")], 0.0, 1.0)
        keyword = features[:, FEATURE_NAMES.index("keyword")]
        result: np.ndarray = self._dense_weight * cosine + self._keyword_weight * keyword
        return result


class RecordingProvider(ScriptedProvider):
    """Answers "ok" and keeps every body it was asked to complete."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[dict[str, Any]] = []

    async def complete(
        self, body: dict[str, Any], *, report: UpstreamReport | None = None
    ) -> dict[str, Any]:
        self.bodies.append(body)
        return await super().complete(body, report=report)
