"""A small memo of recently embedded asks, per tenant, for the semantic lookup.

The query embedding is most of a semantic hit's CPU (~1.3-3 ms of the local encoder's
forward pass for one short text), and popular paraphrases arrive again and again: a
paraphrase served from the semantic cache is never stored under its own exact key, so
every repeat of it embeds the same text again. The encoder is a pure function of the
text, so its vector can be reused.

Keys are (tenant, text): a tenant never gets a vector memoised for another tenant's
request, so how fast its lookup is says nothing about what other tenants asked. One memo
belongs to one embedder (the stage that owns it), so a vector is never reused across
models. Stored vectors are read-only copies: a caller cannot change what a later request
gets.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gateway.bounded_lru import BoundedLRU

# ~2 KiB per 512-dimension vector plus the key: ~3 MiB at most with the defaults.
DEFAULT_MAX_ENTRIES = 1024
# Longer asks are embedded every time: they repeat rarely and would cost memory.
DEFAULT_MAX_TEXT_CHARS = 1000


class EmbeddingMemo:
    """Least-recently-used map (tenant, text) -> vector. `max_entries=0` turns it off.

    Used on the event loop only (no lock): `get` and `put` never await.
    """

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    ) -> None:
        if max_entries < 0 or max_text_chars < 0:
            raise ValueError("max_entries and max_text_chars must be >= 0")
        self._max_text_chars = max_text_chars
        self._vectors: BoundedLRU[tuple[str, str], npt.NDArray[np.float32]] = BoundedLRU(
            max_entries
        )

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, tenant: str, text: str) -> npt.NDArray[np.float32] | None:
        return self._vectors.get((tenant, text))

    def put(self, tenant: str, text: str, vector: npt.ArrayLike) -> None:
        if len(text) > self._max_text_chars:
            return
        stored = np.array(vector, dtype=np.float32, copy=True)
        stored.setflags(write=False)
        self._vectors.put((tenant, text), stored)

    def clear(self) -> None:
        self._vectors.clear()
