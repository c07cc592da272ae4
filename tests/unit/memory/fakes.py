"""In-process fakes behind the memory protocols, for unit tests."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from gateway.embed.protocol import Vectors
from gateway.memory.records import MemoryRecord
from gateway.memory.relevance import FEATURE_NAMES
from gateway.memory.retrieval import ScopeIndex
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


def random_scope(
    count: int, seed: int, queries: int, content: Callable[[random.Random, int], str]
) -> tuple[ScopeIndex, list[np.ndarray]]:
    """A scope of `count` memories on random unit vectors (dimension 16) with texts from
    `content(rng, i)` and random creation times, and `queries` further random vectors."""
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed).standard_normal((count + queries, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [
        MemoryRecord(
            id=f"m{i}",
            tenant="t",
            user="u",
            namespace="",
            content=content(rng, i),
            created_at=1_000.0 + rng.random() * 1_000,
        ).with_vector(vectors[i], "e")
        for i in range(count)
    ]
    return ScopeIndex.build(records, "e"), list(vectors[count:])
