"""The per-tenant memo of query embeddings (gateway/embed/memo.py)."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.embed.memo import EmbeddingMemo


def test_a_vector_is_found_only_under_its_own_tenant_and_text() -> None:
    memo = EmbeddingMemo()
    memo.put("acme", "How do I sort a list?", np.array([1.0, 0.0], dtype=np.float32))
    found = memo.get("acme", "How do I sort a list?")
    assert found is not None
    assert found.tolist() == [1.0, 0.0]
    assert memo.get("globex", "How do I sort a list?") is None
    assert memo.get("acme", "How do I sort a tuple?") is None
    assert memo.get("acme", "how do I sort a list?") is None


def test_the_stored_vector_is_a_read_only_copy() -> None:
    memo = EmbeddingMemo()
    original = np.array([1.0, 0.0], dtype=np.float32)
    memo.put("acme", "q", original)
    original[0] = 5.0  # the caller's array changes later: the memo's does not
    found = memo.get("acme", "q")
    assert found is not None
    assert found.tolist() == [1.0, 0.0]
    with pytest.raises(ValueError, match="read-only"):
        found[0] = 2.0


def test_the_least_recently_used_entry_is_evicted_first() -> None:
    memo = EmbeddingMemo(max_entries=2)
    memo.put("t", "a", np.zeros(2, dtype=np.float32))
    memo.put("t", "b", np.ones(2, dtype=np.float32))
    assert memo.get("t", "a") is not None  # "a" is now the most recent
    memo.put("t", "c", np.ones(2, dtype=np.float32))
    assert len(memo) == 2
    assert memo.get("t", "b") is None
    assert memo.get("t", "a") is not None
    assert memo.get("t", "c") is not None


def test_long_texts_and_a_zero_size_memo_store_nothing() -> None:
    memo = EmbeddingMemo(max_entries=4, max_text_chars=5)
    memo.put("t", "123456", np.ones(2, dtype=np.float32))
    assert memo.get("t", "123456") is None
    off = EmbeddingMemo(max_entries=0)
    off.put("t", "a", np.ones(2, dtype=np.float32))
    assert off.get("t", "a") is None
    assert len(off) == 0


def test_negative_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        EmbeddingMemo(max_entries=-1)
