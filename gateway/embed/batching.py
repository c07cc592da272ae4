"""Micro-batching for an embedder that runs on one worker thread.

A forward pass of the local encoder for one short query reads its whole weight matrices
(~1.3 ms of CPU); for eight queries at once it costs ~0.9 ms each. Under concurrent load
queries arrive while the worker is busy, so instead of queueing them one by one on the
thread they wait here and go through together in the next pass. A lone request (no
concurrency) goes straight through: batching never adds a wait of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor

import numpy as np

from gateway.embed.protocol import Vectors

# Texts in one pass at most: bounds how long the last of them waits for the others.
MAX_BATCH_TEXTS = 32


class EmbeddingBatcher:
    """Gathers `embed` calls that arrive while a pass is running into the next pass.

    `encode` runs on `executor` and maps n texts to an (n, d) array, each row depending
    on its own text only (true of sentence encoders: no cross-text attention).
    """

    def __init__(
        self,
        encode: Callable[[list[str]], Vectors],
        executor: Executor,
        max_batch_texts: int = MAX_BATCH_TEXTS,
    ) -> None:
        self._encode = encode
        self._executor = executor
        self._max_batch_texts = max_batch_texts
        self._waiting: list[tuple[list[str], asyncio.Future[Vectors]]] = []
        self._worker: asyncio.Task[None] | None = None

    async def embed(self, texts: list[str]) -> Vectors:
        loop = asyncio.get_running_loop()
        result: asyncio.Future[Vectors] = loop.create_future()
        self._waiting.append((texts, result))
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._drain())
        # A caller that gives up (timeout, disconnect) cancels only its own future; the
        # pass it was in still serves the others.
        return await result

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._waiting:
            batch = self._take()
            if not batch:
                continue
            texts = [text for request, _ in batch for text in request]
            try:
                vectors = await loop.run_in_executor(self._executor, self._encode, texts)
            except asyncio.CancelledError:  # the app is shutting down
                for _, result in batch:
                    result.cancel()
                raise
            except Exception as exc:  # delivered to each caller; the next pass goes on
                for _, result in batch:
                    if not result.done():
                        result.set_exception(exc)
                continue
            start = 0
            for request, result in batch:
                rows = vectors[start : start + len(request)]
                start += len(request)
                if not result.done():
                    result.set_result(np.ascontiguousarray(rows))

    def _take(self) -> list[tuple[list[str], asyncio.Future[Vectors]]]:
        """The oldest waiting requests that fit in one pass (always at least one);
        requests whose caller has already gone are dropped."""
        batch: list[tuple[list[str], asyncio.Future[Vectors]]] = []
        size = 0
        while self._waiting:
            texts, result = self._waiting[0]
            if result.done():
                self._waiting.pop(0)
                continue
            if batch and size + len(texts) > self._max_batch_texts:
                break
            batch.append(self._waiting.pop(0))
            size += len(texts)
        return batch
