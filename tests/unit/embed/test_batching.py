"""The embedding micro-batcher: concurrent callers share passes, each gets its own rows,
failures and cancellations stay with the callers they belong to."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from gateway.embed.batching import EmbeddingBatcher


class SlowEncoder:
    """Rows encode each text's length; every pass takes `seconds` and is recorded."""

    def __init__(self, seconds: float = 0.05, fail_on: str | None = None) -> None:
        self.seconds = seconds
        self.fail_on = fail_on
        self.passes: list[list[str]] = []
        self.threads: set[str] = set()

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.threads.add(threading.current_thread().name)
        self.passes.append(list(texts))
        threading.Event().wait(self.seconds)
        if self.fail_on is not None and self.fail_on in texts:
            raise RuntimeError("encoder failed")
        return np.array([[len(t), i] for i, t in enumerate(texts)], dtype=np.float32)


@pytest.fixture
def executor() -> ThreadPoolExecutor:
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-test")
    yield pool
    pool.shutdown(wait=True)


async def test_lone_request_is_one_pass_of_its_own(executor: ThreadPoolExecutor) -> None:
    encoder = SlowEncoder(seconds=0)
    batcher = EmbeddingBatcher(encoder, executor)
    vectors = await batcher.embed(["abc", "de"])
    assert vectors[:, 0].tolist() == [3, 2]
    assert encoder.passes == [["abc", "de"]]
    assert encoder.threads == {"embed-test_0"}


async def test_concurrent_requests_share_passes_and_get_their_own_rows(
    executor: ThreadPoolExecutor,
) -> None:
    encoder = SlowEncoder()
    batcher = EmbeddingBatcher(encoder, executor)
    texts = [["x" * n] if n % 3 else ["x" * n, "y" * (n + 100)] for n in range(1, 21)]
    results = await asyncio.gather(*(batcher.embed(t) for t in texts))
    for request, vectors in zip(texts, results, strict=True):
        assert vectors.shape == (len(request), 2)
        assert vectors[:, 0].tolist() == [len(t) for t in request]
        assert vectors.flags["C_CONTIGUOUS"]
    # Requests that arrive together share passes: far fewer passes than requests.
    assert len(encoder.passes) <= 3
    assert sum(len(p) for p in encoder.passes) == sum(len(t) for t in texts)


async def test_requests_arriving_during_a_pass_share_the_next(
    executor: ThreadPoolExecutor,
) -> None:
    encoder = SlowEncoder(seconds=0.3)
    batcher = EmbeddingBatcher(encoder, executor)
    first = asyncio.ensure_future(batcher.embed(["first"]))
    await asyncio.sleep(0.01)  # its pass is running
    later = [asyncio.ensure_future(batcher.embed([f"later {i}"])) for i in range(5)]
    await asyncio.gather(first, *later)
    assert encoder.passes == [["first"], [f"later {i}" for i in range(5)]]


async def test_pass_size_is_bounded(executor: ThreadPoolExecutor) -> None:
    encoder = SlowEncoder(seconds=0.01)
    batcher = EmbeddingBatcher(encoder, executor, max_batch_texts=4)
    await asyncio.gather(*(batcher.embed([str(i)]) for i in range(13)))
    assert max(len(p) for p in encoder.passes) <= 4
    assert sorted(t for p in encoder.passes for t in p) == sorted(str(i) for i in range(13))


async def test_a_failing_pass_fails_its_callers_only(executor: ThreadPoolExecutor) -> None:
    encoder = SlowEncoder(fail_on="bad")
    batcher = EmbeddingBatcher(encoder, executor, max_batch_texts=1)
    first = asyncio.ensure_future(batcher.embed(["ok"]))
    await asyncio.sleep(0.01)  # "ok" is in its pass; the next two wait
    bad = asyncio.ensure_future(batcher.embed(["bad"]))
    after = asyncio.ensure_future(batcher.embed(["fine"]))
    assert (await first)[:, 0].tolist() == [2]
    with pytest.raises(RuntimeError, match="encoder failed"):
        await bad
    assert (await after)[:, 0].tolist() == [4]


async def test_a_caller_that_gives_up_does_not_disturb_the_others(
    executor: ThreadPoolExecutor,
) -> None:
    encoder = SlowEncoder(seconds=0.3)
    batcher = EmbeddingBatcher(encoder, executor)
    busy = asyncio.ensure_future(batcher.embed(["first"]))
    await asyncio.sleep(0.01)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(batcher.embed(["impatient"]), timeout=0.01)
    patient = await batcher.embed(["patient"])
    assert (await busy)[:, 0].tolist() == [5]
    assert patient[:, 0].tolist() == [7]
    # The abandoned text was never encoded.
    assert all("impatient" not in p for p in encoder.passes)
