from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gateway.embed.calibration import Calibration
from gateway.embed.litellm_embedder import EmbeddingResponseError, LiteLLMEmbedder
from gateway.embed.protocol import Embedder
from gateway.testing.fake_provider import FakeProvider, VectorFor


def _vector(dimensions: int) -> VectorFor:
    def vector(text: str) -> list[float]:
        vector = [0.0] * dimensions
        vector[len(text) % dimensions] = 3.0  # unnormalised on purpose
        vector[0] += 4.0
        return vector

    return vector


def embedding_fake(dimensions: int = 3, response: dict[str, Any] | None = None) -> FakeProvider:
    """Knows the model "emb"; answers in OpenAI's shape, items listed in reverse."""
    return FakeProvider(
        models={"emb"},
        vector_for=_vector(dimensions),
        embedding_order="reversed",
        embed_response=response,
    )


async def test_embeds_in_request_order_normalised_and_learns_dimensions() -> None:
    provider = embedding_fake(dimensions=4)
    embedder = LiteLLMEmbedder(provider, "emb")
    assert embedder.name == "litellm:emb"
    assert embedder.dimensions == 0
    vectors = await embedder.embed(["a", "bb"])
    assert provider.embed_bodies == [{"model": "emb", "input": ["a", "bb"]}]
    assert vectors.dtype == np.float32 and vectors.shape == (2, 4)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    # Reordered by "index": row 0 belongs to "a" (len 1), row 1 to "bb".
    assert vectors[0].tolist() == pytest.approx([0.8, 0.6, 0.0, 0.0])
    assert vectors[1].tolist() == pytest.approx([0.8, 0.0, 0.6, 0.0])
    assert embedder.dimensions == 4


async def test_satisfies_the_protocol_and_warms_up() -> None:
    embedder: Embedder = LiteLLMEmbedder(embedding_fake(), "emb", name="hosted")
    await embedder.warm_up()
    assert embedder.name == "hosted"
    assert embedder.dimensions == 3
    assert (await embedder.embed([])).shape == (0, 3)


async def test_dimension_change_is_an_error() -> None:
    provider = embedding_fake(dimensions=3)
    embedder = LiteLLMEmbedder(provider, "emb", dimensions=5)
    with pytest.raises(EmbeddingResponseError, match="expected 5"):
        await embedder.embed(["x"])


@pytest.mark.parametrize(
    "response",
    [
        {"data": []},
        {"nothing": 1},
        {"data": [{"index": 0}]},
        {"data": [{"index": 0, "embedding": ["a", "b"]}]},
        {"data": [{"index": 0, "embedding": []}]},
        {"data": [{"index": 0, "embedding": [float("nan"), 1.0]}]},
    ],
)
async def test_malformed_responses_raise(response: dict[str, Any]) -> None:
    embedder = LiteLLMEmbedder(embedding_fake(response=response), "emb")
    with pytest.raises(EmbeddingResponseError):
        await embedder.embed(["x"])


def test_calibration_defaults_to_identity_and_uses_the_given_one() -> None:
    assert LiteLLMEmbedder(embedding_fake(), "emb").calibrate(0.93) == pytest.approx(0.93)
    fitted = Calibration(raw=(0.9, 1.0), calibrated=(0.0, 1.0))
    embedder = LiteLLMEmbedder(embedding_fake(), "emb", calibration=fitted)
    assert embedder.calibrate(0.95) == pytest.approx(0.5)
