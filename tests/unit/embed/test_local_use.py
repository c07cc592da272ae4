"""The real USE model: ~1 s to load on first use, so one instance serves the module."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

import numpy as np
import pytest
import pytest_asyncio

from gateway.embed.local_use import MODEL_NAME, UniversalSentenceEncoder
from gateway.embed.protocol import Embedder


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def use() -> AsyncIterator[UniversalSentenceEncoder]:
    embedder = UniversalSentenceEncoder.load()
    await embedder.warm_up()
    yield embedder
    await embedder.close()


def _cos(vectors: np.ndarray, i: int, j: int) -> float:
    return float(vectors[i] @ vectors[j])


pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_shape_dtype_and_norm(use: UniversalSentenceEncoder) -> None:
    embedder: Embedder = use
    assert embedder.name == MODEL_NAME == "use-multilingual-v3"
    assert embedder.dimensions == 512
    vectors = await embedder.embed(["hello", "world", "你好"])
    assert vectors.shape == (3, 512)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (await embedder.embed([])).shape == (0, 512)


async def test_english_paraphrase_beats_unrelated(use: UniversalSentenceEncoder) -> None:
    vectors = await use.embed(
        [
            "How do I reset my password?",
            "How can I change my forgotten password?",
            "What is the best pizza topping?",
        ]
    )
    assert _cos(vectors, 0, 1) > _cos(vectors, 0, 2) + 0.2


async def test_chinese_paraphrase_beats_unrelated(use: UniversalSentenceEncoder) -> None:
    # Full-width question marks, as Chinese users type them.
    vectors = await use.embed(
        ["怎么重置我的密码\uff1f", "如何修改忘记的密码\uff1f", "今天北京天气怎么样\uff1f"]
    )
    assert _cos(vectors, 0, 1) > _cos(vectors, 0, 2) + 0.2


async def test_cross_lingual_paraphrase_is_close(use: UniversalSentenceEncoder) -> None:
    vectors = await use.embed(["How is the weather today?", "今天天气怎么样", "I like trains."])
    assert _cos(vectors, 0, 1) > _cos(vectors, 0, 2)


async def test_embedding_runs_off_the_event_loop(use: UniversalSentenceEncoder) -> None:
    seen: list[str] = []
    batcher = use._batcher
    original = batcher._encode

    def spy(texts: list[str]) -> np.ndarray:
        seen.append(threading.current_thread().name)
        return original(texts)

    batcher._encode = spy
    try:
        await asyncio.gather(*(use.embed([f"text {i}"]) for i in range(4)))
    finally:
        batcher._encode = original
    assert seen and all(name.startswith("use-embed") for name in seen)
    assert threading.current_thread().name not in seen


async def test_constructs_lazily_without_arguments() -> None:
    embedder = UniversalSentenceEncoder()  # no model work until the first embedding
    assert embedder._encoder is None
    assert embedder.calibration.embedder == MODEL_NAME
    await embedder.close()


async def test_calibration_is_the_packaged_one(use: UniversalSentenceEncoder) -> None:
    assert use.calibration.embedder == MODEL_NAME
    assert use.calibrate(1.0) == max(use.calibration.calibrated)
    assert use.calibrate(0.5) < use.calibrate(0.9) < use.calibrate(0.99) == 1.0
    # The ask's language picks its curve: English tops out lower (QQP's label noise)
    # and so reaches the default target at a lower raw cosine.
    assert use.calibrate(0.9, "zh") != use.calibrate(0.9, "en")
    assert use.calibration.raw_threshold(0.97, "en") < use.calibration.raw_threshold(0.97, "zh")
