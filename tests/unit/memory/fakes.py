"""In-process fakes behind the memory protocols, for unit tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from gateway.embed.protocol import Vectors
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
